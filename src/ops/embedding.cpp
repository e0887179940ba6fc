// embedding: a row gather from a [num, dim] table. Index range is data-dependent, so it is
// the one check the kernel makes (the meta function checks ranks and dtypes).

#include "symtrace/ops/nn_functional.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

namespace symtrace {

namespace {

OutputMeta embedding_meta(const OpCall& call) {
  const Tensor& weight = call.tensor(0);
  const Tensor& indices = call.tensor(1);
  detail::require_rank(call, weight, "weight", 2);
  detail::require_floating(call, weight, "weight");
  if (indices.dtype() != DType::int64)
    call.fail("indices must be an int64 tensor, got {} of shape {}; convert them with .to(int64)",
              indices.dtype(), indices.shape());
  Shape shape = indices.shape();
  shape.push_back(weight.shape()[1]);
  return OutputMeta::single(weight.dtype(), std::move(shape));
}

Value embedding_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor& weight = call.tensor(0);
  const Tensor indices = detail::contiguous_copy(call.tensor(1));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  const std::int64_t num = weight.shape()[0].value();
  const std::int64_t dim = weight.shape()[1].value();
  const std::int64_t s0 = weight.strides()[0];
  const std::int64_t s1 = weight.strides()[1];
  const float* pw = detail::base_ptr<float>(weight) + weight.storage_offset();
  const std::int64_t count = *indices.shape().numel();
  const std::int64_t* pi = count > 0 ? indices.data_ptr<std::int64_t>() : nullptr;
  float* po = count > 0 ? out.data_ptr<float>() : nullptr;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t index = pi[i];
    if (index < 0 || index >= num)
      call.fail("index {} is out of range for an embedding table of {} rows (weight of shape {}); indices must "
                "be in [0, {})",
                index, num, weight.shape(), num);
    const float* row = pw + index * s0;
    for (std::int64_t j = 0; j < dim; ++j) po[i * dim + j] = row[j * s1];
  }
  return out;
}

}  // namespace

void detail::register_embedding_ops(OpRegistry& r) {
  r.add("embedding(Tensor weight, Tensor indices) -> Tensor", embedding_meta, embedding_kernel, OpFlags::none);
}

// ---- Typed API ---------------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices, Where where) {
  return detail::invoke(SYMTRACE_OP("embedding"), where, CallStyle::function, weight, indices);
}

}  // namespace symtrace
