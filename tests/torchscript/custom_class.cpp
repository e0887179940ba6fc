// A class and an operator registered with LibTorch (torch::class_, TORCH_LIBRARY), as a
// library of custom ops and classes registers them: built twice, as `symtrace_test.Offset` and
// `symtrace_test::twice_Offset` (which the tests load) and as `symtrace_test.Unloaded` and
// `symtrace_test::twice_Unloaded` (which only the script making the model files loads, so a
// file using them names what the tests' process does not have).
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

namespace {
at::Tensor twice(const at::Tensor& x) { return x.add(x); }
}  // namespace

TORCH_LIBRARY_FRAGMENT(symtrace_test, m) {
  m.def("twice_" SYMTRACE_STRING(SYMTRACE_TEST_CLASS) "(Tensor x) -> Tensor", &twice);
  m.class_<Offset>(SYMTRACE_STRING(SYMTRACE_TEST_CLASS))
      .def(torch::init<double>())
      .def("apply", &Offset::apply)
      .def_pickle([](const c10::intrusive_ptr<Offset>& self) -> double { return self->value; },
                  [](double value) { return c10::make_intrusive<Offset>(value); });
}
