// The Tensor methods and operators: each boxes its arguments and goes through the one
// dispatch point with CallStyle::method (operators record the function form, as fx records
// operator.add for `a + b`).

#include "symtrace/core/tensor.hpp"

#include "ops/call_util.hpp"

namespace symtrace {

using detail::invoke;
using detail::invoke_list;
using detail::operand_value;
namespace {
using detail::method;
constexpr CallStyle function = CallStyle::function;
}  // namespace

Tensor Tensor::add(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("add"), w, method, *this, operand_value(o)); }
Tensor Tensor::sub(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("sub"), w, method, *this, operand_value(o)); }
Tensor Tensor::mul(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("mul"), w, method, *this, operand_value(o)); }
Tensor Tensor::div(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("div"), w, method, *this, operand_value(o)); }
Tensor Tensor::pow(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("pow"), w, method, *this, operand_value(o)); }
Tensor Tensor::eq(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("eq"), w, method, *this, operand_value(o)); }
Tensor Tensor::ne(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("ne"), w, method, *this, operand_value(o)); }
Tensor Tensor::lt(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("lt"), w, method, *this, operand_value(o)); }
Tensor Tensor::le(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("le"), w, method, *this, operand_value(o)); }
Tensor Tensor::gt(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("gt"), w, method, *this, operand_value(o)); }
Tensor Tensor::ge(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("ge"), w, method, *this, operand_value(o)); }
Tensor Tensor::neg(Where w) const { return invoke(SYMTRACE_OP("neg"), w, method, *this); }
Tensor Tensor::abs(Where w) const { return invoke(SYMTRACE_OP("abs"), w, method, *this); }
Tensor Tensor::exp(Where w) const { return invoke(SYMTRACE_OP("exp"), w, method, *this); }
Tensor Tensor::log(Where w) const { return invoke(SYMTRACE_OP("log"), w, method, *this); }
Tensor Tensor::sqrt(Where w) const { return invoke(SYMTRACE_OP("sqrt"), w, method, *this); }
Tensor Tensor::rsqrt(Where w) const { return invoke(SYMTRACE_OP("rsqrt"), w, method, *this); }
Tensor Tensor::relu(Where w) const { return invoke(SYMTRACE_OP("relu"), w, method, *this); }
Tensor Tensor::sigmoid(Where w) const { return invoke(SYMTRACE_OP("sigmoid"), w, method, *this); }
Tensor Tensor::tanh(Where w) const { return invoke(SYMTRACE_OP("tanh"), w, method, *this); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max, Where w) const {
  return invoke(SYMTRACE_OP("clamp"), w, method, *this, min, max);
}
Tensor Tensor::softmax(std::int64_t dim, Where w) const { return invoke(SYMTRACE_OP("softmax"), w, method, *this, dim); }
Tensor Tensor::log_softmax(std::int64_t dim, Where w) const {
  return invoke(SYMTRACE_OP("log_softmax"), w, method, *this, dim);
}
Tensor Tensor::sum(const IntList& dims, bool keepdim, Where w) const {
  return invoke(SYMTRACE_OP("sum"), w, method, *this, dims, keepdim);
}
Tensor Tensor::mean(const IntList& dims, bool keepdim, Where w) const {
  return invoke(SYMTRACE_OP("mean"), w, method, *this, dims, keepdim);
}
Tensor Tensor::amax(const IntList& dims, bool keepdim, Where w) const {
  return invoke(SYMTRACE_OP("amax"), w, method, *this, dims, keepdim);
}
Tensor Tensor::argmax(std::optional<std::int64_t> dim, bool keepdim, Where w) const {
  return invoke(SYMTRACE_OP("argmax"), w, method, *this, dim, keepdim);
}
Tensor Tensor::matmul(const Tensor& other, Where w) const { return invoke(SYMTRACE_OP("matmul"), w, method, *this, other); }
Tensor Tensor::to(DType dtype, Where w) const { return invoke(SYMTRACE_OP("to"), w, method, *this, dtype); }

Tensor Tensor::reshape(const SymIntList& shape, Where w) const { return invoke(SYMTRACE_OP("reshape"), w, method, *this, shape); }
Tensor Tensor::view(const SymIntList& shape, Where w) const { return invoke(SYMTRACE_OP("view"), w, method, *this, shape); }
Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim, Where w) const {
  return invoke(SYMTRACE_OP("flatten"), w, method, *this, start_dim, end_dim);
}
Tensor Tensor::permute(const IntList& dims, Where w) const { return invoke(SYMTRACE_OP("permute"), w, method, *this, dims); }
Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1, Where w) const {
  return invoke(SYMTRACE_OP("transpose"), w, method, *this, dim0, dim1);
}
Tensor Tensor::unsqueeze(std::int64_t dim, Where w) const { return invoke(SYMTRACE_OP("unsqueeze"), w, method, *this, dim); }
Tensor Tensor::squeeze(std::optional<std::int64_t> dim, Where w) const {
  return invoke(SYMTRACE_OP("squeeze"), w, method, *this, dim);
}
Tensor Tensor::expand(const SymIntList& sizes, Where w) const { return invoke(SYMTRACE_OP("expand"), w, method, *this, sizes); }
Tensor Tensor::contiguous(Where w) const { return invoke(SYMTRACE_OP("contiguous"), w, method, *this); }
TensorList Tensor::chunk(std::int64_t chunks, std::int64_t dim, Where w) const {
  return invoke_list(SYMTRACE_OP("chunk"), w, method, *this, chunks, dim);
}
TensorList Tensor::split(std::int64_t split_size, std::int64_t dim, Where w) const {
  return invoke_list(SYMTRACE_OP("split"), w, method, *this, split_size, dim);
}
TensorList Tensor::split(const IntList& split_sizes, std::int64_t dim, Where w) const {
  return invoke_list(SYMTRACE_OP("split_with_sizes"), w, method, *this, split_sizes, dim);
}
TensorList Tensor::unbind(std::int64_t dim, Where w) const { return invoke_list(SYMTRACE_OP("unbind"), w, method, *this, dim); }
Tensor Tensor::slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step, Where w) const {
  return invoke(SYMTRACE_OP("slice"), w, method, *this, dim, start, end, step);
}
Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length, Where w) const {
  return invoke(SYMTRACE_OP("narrow"), w, method, *this, dim, start, length);
}
Tensor Tensor::select(std::int64_t dim, std::int64_t index, Where w) const {
  return invoke(SYMTRACE_OP("select"), w, method, *this, dim, index);
}
Tensor Tensor::index_select(std::int64_t dim, const Tensor& index, Where w) const {
  return invoke(SYMTRACE_OP("index_select"), w, method, *this, dim, index);
}

Tensor Tensor::add_(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("add_"), w, method, *this, operand_value(o)); }
Tensor Tensor::mul_(const Operand& o, Where w) const { return invoke(SYMTRACE_OP("mul_"), w, method, *this, operand_value(o)); }
Tensor Tensor::relu_(Where w) const { return invoke(SYMTRACE_OP("relu_"), w, method, *this); }
Tensor Tensor::copy_(const Tensor& src, Where w) const { return invoke(SYMTRACE_OP("copy_"), w, method, *this, src); }
Tensor Tensor::fill_(const Scalar& value, Where w) const { return invoke(SYMTRACE_OP("fill_"), w, method, *this, value); }

Tensor operator+(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("add"), b.where, function, a, operand_value(b)); }
Tensor operator-(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("sub"), b.where, function, a, operand_value(b)); }
Tensor operator*(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("mul"), b.where, function, a, operand_value(b)); }
Tensor operator/(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("div"), b.where, function, a, operand_value(b)); }
Tensor operator+(const ScalarOperand& a, const Tensor& b) { return invoke(SYMTRACE_OP("add"), a.where, function, a.scalar, b); }
Tensor operator-(const ScalarOperand& a, const Tensor& b) { return invoke(SYMTRACE_OP("sub"), a.where, function, a.scalar, b); }
Tensor operator*(const ScalarOperand& a, const Tensor& b) { return invoke(SYMTRACE_OP("mul"), a.where, function, a.scalar, b); }
Tensor operator/(const ScalarOperand& a, const Tensor& b) { return invoke(SYMTRACE_OP("div"), a.where, function, a.scalar, b); }
Tensor operator-(const Operand& a) { return invoke(SYMTRACE_OP("neg"), a.where, function, operand_value(a)); }
Tensor operator<(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("lt"), b.where, function, a, operand_value(b)); }
Tensor operator<=(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("le"), b.where, function, a, operand_value(b)); }
Tensor operator>(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("gt"), b.where, function, a, operand_value(b)); }
Tensor operator>=(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("ge"), b.where, function, a, operand_value(b)); }
Tensor operator==(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("eq"), b.where, function, a, operand_value(b)); }
Tensor operator!=(const Tensor& a, const Operand& b) { return invoke(SYMTRACE_OP("ne"), b.where, function, a, operand_value(b)); }
Tensor& operator+=(Tensor& a, const Operand& b) {
  invoke(SYMTRACE_OP("add_"), b.where, method, a, operand_value(b));
  return a;
}
Tensor& operator*=(Tensor& a, const Operand& b) {
  invoke(SYMTRACE_OP("mul_"), b.where, method, a, operand_value(b));
  return a;
}

}  // namespace symtrace
