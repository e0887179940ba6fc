#pragma once
/// \file
/// `boost::container::small_vector`, included so that g++ 12's false `-Wstringop-overread`
/// on its inlined move constructor (a memcpy it cannot prove bounded) does not reach users
/// who build with -Werror. The suppression applies to Boost's own lines only.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#include <boost/container/small_vector.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
