// A class registered with LibTorch (torch::class_), as a library of custom ops and classes
// registers one: built twice, as `symtrace_test.Offset` (which the tests load) and as
// `symtrace_test.Unloaded` (which only the script making the model files loads, so a file
// holding one names a class the tests' process does not have).
#include <torch/custom_class.h>
#include <torch/library.h>

#ifndef SYMTRACE_TEST_CLASS
#error "define SYMTRACE_TEST_CLASS as the class's name"
#endif
#define SYMTRACE_STRING_INNER(x) #x
#define SYMTRACE_STRING(x) SYMTRACE_STRING_INNER(x)

namespace {

/// Adds a number to a tensor.
struct Offset : torch::CustomClassHolder {
  explicit Offset(double v) : value(v) {}
  at::Tensor apply(const at::Tensor& x) const { return x.add(value); }
  double value;
};

}  // namespace

TORCH_LIBRARY_FRAGMENT(symtrace_test, m) {
  m.class_<Offset>(SYMTRACE_STRING(SYMTRACE_TEST_CLASS))
      .def(torch::init<double>())
      .def("apply", &Offset::apply)
      .def_pickle([](const c10::intrusive_ptr<Offset>& self) -> double { return self->value; },
                  [](double value) { return c10::make_intrusive<Offset>(value); });
}
