#pragma once
/// \file
/// The one interception seam (docs/design.md, decision 12), as c10's `ThreadLocalState` is for PyTorch:
/// every op call, module call, `cond` and read of tensor data asks this thread's context two things,
/// once: is an `Interposer` installed (a symbolic trace, a trace by execution), and are
/// observers on (`has_callbacks()`, the RecordFunction registry in ops/record_function.hpp).
/// With neither, an eager op or module call pays one thread-local load, one relaxed atomic
/// load and two branches.
///
/// An interposer decides what the calls it is given become: a tracer records ops, module calls
/// and conds as nodes; a trace by execution runs them and notes where data is read. Interposers
/// nest per thread: `InterposerScope` installs one for its lifetime and restores the previous
/// one when it ends, also when an exception passes; the previous one is `outer()`. An
/// interposer object is installed once at a time, on one thread: a second installation (on
/// this thread or another) throws std::logic_error.

#include "symtrace/core/value.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <source_location>

namespace symtrace {

class Module;
struct OpCall;

namespace detail {
struct TraceLocation;
}  // namespace detail

/// A branch of `cond` (trace/cond.hpp): gets the operands, returns a Tensor or a list of tensors.
using CondBranch = std::function<Value(const TensorList& operands)>;

/// What a read of a concrete tensor's data as C++ values was.
enum class DataRead : unsigned char {
  item,
  to_bool,
  to_vector
};

/// Intercepts the op calls, module calls and data reads of the thread it is installed on; see
/// the file comment.
class Interposer {
 public:
  Interposer(const Interposer&) = delete;
  Interposer& operator=(const Interposer&) = delete;

  /// An op call with a symbolic argument, or, when `sees_concrete_calls()`, an all-concrete
  /// call reading a tensor `intercepts` claims. Returns the call's result.
  virtual Value call_op(const OpCall& call) = 0;
  /// Every module call on the thread, instead of running `module`'s forward. `where` is the
  /// call site (`conv1(x)` in the parent's forward). The result must have the kind the
  /// module's forward declares (a Tensor, a list of that many values for a tuple, a list for a
  /// vector); `module.run_forward(args, where)` runs it as if nothing were installed.
  virtual Value call_module(Module& module, const ValueList& args, std::source_location where) = 0;
  /// A `cond` (trace/cond.hpp) whose predicate is symbolic: a trace records both branches and
  /// returns the symbolic result. Default: the outer interposer's, or a TraceError when there
  /// is none.
  virtual Value call_cond(const Tensor& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                          const TensorList& operands, std::source_location where);
  /// Whether an all-concrete op call reading `tensor` must reach `call_op` (a parameter of the
  /// model a trace traces: fx records `self.weight.t()`). Asked only when
  /// `sees_concrete_calls()`. Default: no.
  [[nodiscard]] virtual bool intercepts(const Tensor& tensor) const;
  /// A read of a concrete tensor's data (`item()`, `to_bool()`, `to_vector()`). Default: the
  /// outer interposer's, if any.
  virtual void on_data_read(DataRead read, std::source_location where);
  /// Fills `location` with the module a trace is in, for TraceError messages; false when it
  /// is in none. Default: the outer interposer's answer, or false.
  virtual bool locate(detail::TraceLocation& location) const;
  /// A fact about named dims that an op at `where` needs and their ranges cannot decide
  /// (`N == M` to broadcast them together, `H % 32 == 0` for a reshape): a trace records it as
  /// a guard of its graph. Default: the outer interposer's, or a TraceError when there is none.
  virtual void assume(const SymFact& fact, std::source_location where);

  /// Whether all-concrete op calls are offered to `intercepts` (fixed at construction).
  [[nodiscard]] bool sees_concrete_calls() const noexcept { return sees_concrete_calls_; }
  /// The interposer that was installed when this one was, while this one is installed.
  [[nodiscard]] Interposer* outer() const noexcept { return outer_; }
  /// Whether an InterposerScope has this interposer installed now (on any thread).
  [[nodiscard]] bool is_installed() const noexcept { return installed_.load(std::memory_order_acquire); }

 protected:
  explicit Interposer(bool sees_concrete_calls = false) noexcept : sees_concrete_calls_(sees_concrete_calls) {}
  virtual ~Interposer() = default;

 private:
  friend class InterposerScope;
  Interposer* outer_ = nullptr;  // written only by the one installation
  std::atomic<bool> installed_{false};
  bool sees_concrete_calls_;
};

namespace detail {
/// This thread's interposer (the innermost installed), or nullptr. Initial-exec: a read is one
/// load at a fixed offset from the thread pointer, also inside the shared library, where the
/// default model calls __tls_get_addr on every read (every op call reads it, a traced node
/// several times).
[[gnu::tls_model("initial-exec")]] constinit inline thread_local Interposer* t_interposer = nullptr;

/// Note [Observers off]: the number of observer callbacks registered anywhere (global ones and
/// every thread's thread-local ones), kept by ops/record_function.cpp. An event reads it once,
/// relaxed; zero means nothing to do.
constinit inline std::atomic<std::uint32_t> g_observer_count{0};
}  // namespace detail

/// The interposer installed on this thread, or nullptr.
[[nodiscard]] inline Interposer* current_interposer() noexcept { return detail::t_interposer; }

/// True when some observer callback is registered somewhere (it may be another thread's).
[[nodiscard]] inline bool has_callbacks() noexcept {
  return detail::g_observer_count.load(std::memory_order_relaxed) != 0;
}

/// Installs an interposer on this thread for the scope's lifetime and restores the previous
/// one when it ends. An interposer is installed at most once at a time: installing it while it
/// is installed (on this thread or another) throws std::logic_error and changes nothing.
class InterposerScope {
 public:
  explicit InterposerScope(Interposer& interposer);
  ~InterposerScope();
  InterposerScope(const InterposerScope&) = delete;
  InterposerScope& operator=(const InterposerScope&) = delete;

 private:
  Interposer& interposer_;
  Interposer* previous_;
};

namespace detail {
/// Tells this thread's interposer, if any, about a read of concrete data.
inline void note_data_read(DataRead read, std::source_location where) {
  if (Interposer* interposer = t_interposer) [[unlikely]]
    interposer->on_data_read(read, where);
}
}  // namespace detail

}  // namespace symtrace
