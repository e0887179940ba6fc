#pragma once
// LibTorch's own RecordFunction, observing what LibTorch's dispatcher runs (kept out of the test
// files: LibTorch's headers bring glog's CHECK, which would hide doctest's).

#include <functional>
#include <set>
#include <string>

namespace symtrace::testing {

/// The operators (`aten::add.Tensor`) LibTorch's dispatcher runs on any thread while `run`
/// runs, as a global callback of LibTorch's RecordFunction (at::addGlobalCallback, FUNCTION
/// scope) sees them.
std::set<std::string> observed_by_libtorch(const std::function<void()>& run);

}  // namespace symtrace::testing
