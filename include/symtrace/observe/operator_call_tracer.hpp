#pragma once
/// \file
/// `OperatorCallTracer`: while alive, collects the set of ops called on eager tensors, on every
/// thread (PyTorch's mobile `OperatorCallTracer`, for selective builds: the closed set of ops a
/// program needs). Ops called inside other ops (a composite op, such as a callable whose
/// function calls ops) are collected too, and counted apart. Built on a global
/// RecordFunction callback of scope `function`; ops a trace records symbolically are not calls.
///
///     symtrace::OperatorCallTracer tracer;
///     (void)model->call(inputs);
///     for (const std::string& op : tracer.called_operators()) fmt::print("{}\n", op);

#include "symtrace/ops/record_function.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace symtrace {

/// How an op was called while an OperatorCallTracer was alive.
struct OperatorUse {
  std::string name;
  std::uint64_t calls = 0;         ///< every call, nested ones included
  std::uint64_t nested_calls = 0;  ///< calls made while another op ran (inside a composite op)
  /// Calls whose bool argument `training` or `train` was true (batch_norm computing batch
  /// statistics, dropout drawing): the op's training path is needed.
  std::uint64_t training_calls = 0;
  friend bool operator==(const OperatorUse&, const OperatorUse&) = default;
};

class OperatorCallTracer {
 public:
  /// Starts collecting (adds a global callback).
  OperatorCallTracer();
  /// Stops collecting (removes the callback).
  ~OperatorCallTracer();
  OperatorCallTracer(const OperatorCallTracer&) = delete;
  OperatorCallTracer& operator=(const OperatorCallTracer&) = delete;

  /// The names of the ops called so far, sorted.
  [[nodiscard]] std::vector<std::string> called_operators() const;
  /// What was seen of each op called so far, sorted by name.
  [[nodiscard]] std::vector<OperatorUse> uses() const;
  /// Forgets what was collected; collecting goes on.
  void clear();

 private:
  struct State;
  std::shared_ptr<State> state_;
  CallbackHandle handle_ = 0;
};

}  // namespace symtrace
