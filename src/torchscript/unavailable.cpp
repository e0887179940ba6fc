// The TorchScript front end of a build without LibTorch: it says so.
#include "symtrace/torchscript/load.hpp"
#include "symtrace/torchscript/operator_lists.hpp"
#include "symtrace/torchscript/save.hpp"

#include <stdexcept>

namespace symtrace::torchscript {

namespace {
[[noreturn]] void missing() {
  throw std::runtime_error(
      "this build of symtrace has no TorchScript support: install LibTorch (Debian's libtorch-dev, "
      "tools/install-deps does) and configure again with -Dtorchscript=enabled");
}
}  // namespace

bool available() noexcept { return false; }
std::shared_ptr<Module> load(const std::filesystem::path&) { missing(); }
Value run_in_libtorch(const std::filesystem::path&, const ValueList&) { missing(); }
void detail::read_with_libtorch(const std::filesystem::path&) { missing(); }
OperatorLists operator_lists(const std::filesystem::path&, const ValueList&) { missing(); }
void save_with_tensors(const std::filesystem::path&, const Module&, const std::filesystem::path&) { missing(); }

}  // namespace symtrace::torchscript
