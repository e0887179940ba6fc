#pragma once
/// \file
/// `SkipInitScope`: layers made while one is alive on the thread keep the values their
/// tensors were allocated with instead of drawing them (`nn::init`'s functions check their
/// tensor and return it as it is), as `torch.nn.utils.skip_init` does. For a loader that makes
/// a layer only to overwrite every one of its tensors at once (the TorchScript front end):
/// drawing 25 million weights that are thrown away costs more than reading the file.

namespace symtrace::nn::detail {

/// True while a SkipInitScope is alive on this thread.
[[nodiscard]] bool skipping_init() noexcept;

/// Skips parameter initialisation on this thread for its lifetime; nests.
class SkipInitScope {
 public:
  SkipInitScope() noexcept;
  ~SkipInitScope();
  SkipInitScope(const SkipInitScope&) = delete;
  SkipInitScope& operator=(const SkipInitScope&) = delete;

 private:
  bool previous_;
};

}  // namespace symtrace::nn::detail
