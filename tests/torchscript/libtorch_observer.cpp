// LibTorch's own RecordFunction callback, for the tests (see the header).
#include "torchscript/libtorch_observer.hpp"

#include <ATen/core/operator_name.h>
#include <ATen/record_function.h>

#include <mutex>

namespace symtrace::testing {

namespace {

// LibTorch's callbacks are plain function pointers: what they see goes here.
std::mutex g_mutex;
std::set<std::string>* g_observed = nullptr;

std::unique_ptr<at::ObserverContext> observe(const at::RecordFunction& fn) {
  if (const c10::optional<c10::OperatorName> name = fn.operator_name()) {
    const std::lock_guard lock(g_mutex);
    if (g_observed != nullptr) g_observed->insert(c10::toString(*name));
  }
  return nullptr;
}

}  // namespace

std::set<std::string> observed_by_libtorch(const std::function<void()>& run) {
  std::set<std::string> observed;
  {
    const std::lock_guard lock(g_mutex);
    g_observed = &observed;
  }
  const at::CallbackHandle handle =
      at::addGlobalCallback(at::RecordFunctionCallback(&observe).scopes({at::RecordScope::FUNCTION}));
  const auto stop = [&] {
    at::removeCallback(handle);
    const std::lock_guard lock(g_mutex);
    g_observed = nullptr;
  };
  try {
    run();
  } catch (...) {
    stop();
    throw;
  }
  stop();
  return observed;
}

}  // namespace symtrace::testing
