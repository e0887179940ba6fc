#include "support/checks.hpp"
