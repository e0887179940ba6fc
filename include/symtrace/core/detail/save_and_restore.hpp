#pragma once
/// \file
/// `detail::SaveAndRestore` (LLVM's): sets a variable for the lifetime of a scope and puts
/// its old value back when the scope ends, by return or by exception.
///
///     SaveAndRestore in_callback(t_in_callback, true);   // restored however the callback ends

#include <utility>

namespace symtrace::detail {

/// Sets `target` to `value` and restores its old value on destruction. Not copyable or
/// movable: it names one scope.
template <class T>
class [[nodiscard]] SaveAndRestore {
 public:
  SaveAndRestore(T& target, T value) : target_(target), saved_(std::exchange(target, std::move(value))) {}
  ~SaveAndRestore() { target_ = std::move(saved_); }
  SaveAndRestore(const SaveAndRestore&) = delete;
  SaveAndRestore& operator=(const SaveAndRestore&) = delete;

 private:
  T& target_;
  T saved_;
};

}  // namespace symtrace::detail
