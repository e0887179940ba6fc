#include "symtrace/nn/detail/forward_traits.hpp"

#include "symtrace/core/error.hpp"
#include "nn/type_name.hpp"

#include <fmt/format.h>

#include <boost/core/demangle.hpp>

#include <stdexcept>

namespace symtrace::detail {

void throw_unbox_error(const UnboxContext& context, std::string_view expected, const Value& got) {
  if (!context.declared.empty()) expected = context.declared;
  const std::string type = context.module ? context.module->type_name() : std::string("Module");
  if (context.parameter.empty())
    throw std::invalid_argument(fmt::format("{}.forward() returns {}, but the call produced {}", type,
                                            expected, got.type_name()));
  throw std::invalid_argument(fmt::format("{}.forward(): argument '{}' (position {}) must be {}, got {}",
                                          type, context.parameter, context.position, expected,
                                          got.type_name()));
}

void throw_arity_error(const Module& module, std::size_t given) {
  const ForwardSignature* sig = module.forward_signature();
  const std::size_t n = sig->parameters.size();
  const std::string takes = sig->num_required == n
                                ? fmt::format("{} argument{}", n, n == 1 ? "" : "s")
                                : fmt::format("{} to {} arguments", sig->num_required, n);
  throw std::invalid_argument(fmt::format("{}.forward() takes {} ({}), got {}", module.type_name(), takes,
                                          fmt::join(module.input_names(), ", "), given));
}

[[noreturn]] void throw_empty_holder(std::string_view mangled, std::source_location where) {
  const std::string name = shorten_type_name(boost::core::demangle(std::string(mangled).c_str()));
  throw_invalid_argument(where,
                         "use of an empty ModuleHolder<{}>: it was made from nullptr and never "
                         "assigned (assign it the result of register_module)",
                         name);
}

}  // namespace symtrace::detail
