#include "ops/families.hpp"

namespace symtrace {

void detail::register_convolution_ops(OpRegistry&) {}

}  // namespace symtrace
