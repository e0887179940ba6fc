// Matrix products: matmul (PyTorch's rules for 1-D operands and broadcast batch dims) and
// linear (y = x W^T + b). Both run on detail::gemm over contiguous operands, whose inner loop
// walks rows of the right-hand matrix: linear therefore transposes its weight once into a
// contiguous [in, out] buffer, and matmul folds the batch dims of the left operand into its
// rows whenever the right operand is a single matrix, so one gemm call does all the work.

#include "symtrace/ops/linalg.hpp"

#include "ops/call_util.hpp"
#include "ops/families.hpp"
#include "ops/gemm.hpp"
#include "ops/kernel_util.hpp"
#include "ops/meta_util.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace symtrace {

namespace {

// ---- matmul ------------------------------------------------------------------------------

/// The shapes of one matmul: each operand as a (batch of) matrices after PyTorch's promotion
/// of 1-D operands ([k] on the left is [1, k], on the right [k, 1]), and the result.
struct MatmulShapes {
  Shape a_batch;  ///< the left operand's own batch dims
  Shape b_batch;  ///< the right operand's own batch dims
  Shape batch;    ///< the two broadcast together
  Dim m, k, n;
  Shape out;  ///< batch + [m] + [n], without the dims added for 1-D operands
};

Shape leading(const Shape& s, std::size_t count) {
  Shape out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(s[i]);
  return out;
}

MatmulShapes matmul_shapes(const OpCall& call, const Shape& a, const Shape& b) {
  MatmulShapes s;
  const std::size_t ra = a.rank(), rb = b.rank();
  s.a_batch = ra > 2 ? leading(a, ra - 2) : Shape{};
  s.b_batch = rb > 2 ? leading(b, rb - 2) : Shape{};
  s.m = ra == 1 ? Dim(1) : a[ra - 2];
  s.k = a[ra - 1];
  const Dim kb = rb == 1 ? b[0] : b[rb - 2];
  s.n = rb == 1 ? Dim(1) : b[rb - 1];
  if (!detail::same_size(call, s.k, kb, "multiplying matrices: the inner dims must agree"))
    call.fail("cannot multiply shapes {} and {}: the last dim of the first ({}) must equal the {} of the second "
              "({}); transpose or reshape one of them so they match",
              a, b, s.k, rb == 1 ? "only dim" : "second-to-last dim", kb);
  // The batch dims broadcast; checked here so the message names the operands' whole shapes.
  const std::size_t rank = std::max(s.a_batch.rank(), s.b_batch.rank());
  const std::size_t pad_a = rank - s.a_batch.rank(), pad_b = rank - s.b_batch.rank();
  for (std::size_t i = std::max(pad_a, pad_b); i < rank; ++i) {  // a missing leading dim broadcasts
    const Dim da = s.a_batch[i - pad_a], db = s.b_batch[i - pad_b];
    if (da.is_known() && db.is_known() && da != db && da.raw() != 1 && db.raw() != 1)
      call.fail("cannot multiply shapes {} and {}: their batch dims {} and {} cannot be broadcast ({} against {}); "
                "make them equal or 1",
                a, b, s.a_batch, s.b_batch, da, db);
  }
  s.batch = detail::broadcast_shapes(call, s.a_batch, s.b_batch);
  s.out = s.batch;
  if (ra > 1) s.out.push_back(s.m);
  if (rb > 1) s.out.push_back(s.n);
  return s;
}

OutputMeta matmul_meta(const OpCall& call) {
  const Tensor& a = call.tensor(0);
  const Tensor& b = call.tensor(1);
  if (a.dtype() == DType::bool_ || b.dtype() == DType::bool_)
    call.fail("is not defined for bool tensors (got {} of shape {} and {} of shape {}); convert with .to(float32) "
              "first",
              a.dtype(), a.shape(), b.dtype(), b.shape());
  if (a.dim() == 0 || b.dim() == 0)
    call.fail("both arguments need at least 1 dim, got shapes {} and {}; use mul() to scale by a 0-dim tensor",
              a.shape(), b.shape());
  return OutputMeta::single(promote_types(a.dtype(), b.dtype()), matmul_shapes(call, a.shape(), b.shape()).out);
}

/// Element offsets of each batch matrix of a contiguous operand with batch dims `own`, for
/// every index of the broadcast batch `sizes` in row-major order (0 stride where broadcast).
std::vector<std::int64_t> batch_offsets(const Shape& own, const IntList& sizes, std::int64_t matrix_size) {
  const std::size_t rank = sizes.size();
  IntList strides(rank, 0);
  std::int64_t step = matrix_size;
  for (std::size_t i = own.rank(); i-- > 0;) {
    const std::int64_t n = own[i].value();
    if (n != 1) strides[rank - own.rank() + i] = step;
    step *= n;
  }
  std::int64_t total = 1;
  for (std::int64_t n : sizes) total *= n;
  std::vector<std::int64_t> offsets;
  offsets.reserve(static_cast<std::size_t>(total));
  IntList index(rank, 0);
  for (std::int64_t b = 0; b < total; ++b) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) off += index[d] * strides[d];
    offsets.push_back(off);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

Value matmul_kernel(const OpCall& call, const OutputMeta& meta) {
  const DType dtype = meta.outputs[0].dtype;
  const Tensor a = detail::contiguous_copy(detail::cast(call.tensor(0), dtype));
  const Tensor b = detail::contiguous_copy(detail::cast(call.tensor(1), dtype));
  const MatmulShapes s = matmul_shapes(call, a.shape(), b.shape());
  const std::int64_t m = s.m.value(), k = s.k.value(), n = s.n.value();
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      SYMTRACE_ASSERT(false, "matmul never computes in bool");
    } else {
      const T* pa = a.data_ptr<T>();
      const T* pb = b.data_ptr<T>();
      T* po = out.data_ptr<T>();
      if (s.b_batch.empty()) {  // one right-hand matrix: every batch of the left is more rows
        std::int64_t rows = m;
        for (Dim d : s.a_batch) rows *= d.value();
        detail::gemm(rows, n, k, pa, k, pb, n, po, n);
        return;
      }
      const IntList sizes = s.batch.sizes();
      const auto a_offsets = batch_offsets(s.a_batch, sizes, m * k);
      const auto b_offsets = batch_offsets(s.b_batch, sizes, k * n);
      for (std::size_t i = 0; i < a_offsets.size(); ++i)
        detail::gemm(m, n, k, pa + a_offsets[i], k, pb + b_offsets[i], n,
                     po + static_cast<std::int64_t>(i) * m * n, n);
    }
  });
  return out;
}

// ---- linear ------------------------------------------------------------------------------

OutputMeta linear_meta(const OpCall& call) {
  const Tensor& x = call.tensor(0);
  const Tensor& weight = call.tensor(1);
  const Tensor* bias = call.optional_tensor(2);
  detail::require_floating(call, x, "input");
  detail::require_floating(call, weight, "weight");
  detail::require_rank(call, weight, "weight", 2);
  if (x.dim() == 0)
    call.fail("argument 'input' must have at least 1 dim, got shape {} (weight of shape {}); give it a features dim",
              x.shape(), weight.shape());
  const Dim in = x.shape()[x.shape().rank() - 1];
  if (!detail::same_size(call, in, weight.shape()[1], "linear(): the input's last dim must be the weight's in_features"))
    call.fail("input of shape {} does not match weight of shape {}: the last dim of the input ({}) must equal the "
              "weight's second dim (in_features, {})",
              x.shape(), weight.shape(), in, weight.shape()[1]);
  Dim out_features = weight.shape()[0];
  if (bias) {
    detail::require_floating(call, *bias, "bias");
    detail::require_rank(call, *bias, "bias", 1);
    const Dim nb = bias->shape()[0];
    if (nb.is_known() && out_features.is_known() && nb != out_features)
      call.fail("bias of shape {} does not match weight of shape {}: expected shape [{}] (out_features)",
                bias->shape(), weight.shape(), out_features);
    if (!out_features.is_known()) out_features = nb;
  }
  Shape out = x.shape();
  out[out.rank() - 1] = out_features;
  return OutputMeta::single(DType::float32, std::move(out));
}

Value linear_kernel(const OpCall& call, const OutputMeta& meta) {
  const Tensor x = detail::contiguous_copy(call.tensor(0));
  const Tensor& weight = call.tensor(1);
  const Tensor* bias = call.optional_tensor(2);
  const std::int64_t out_features = weight.shape()[0].value(), in_features = weight.shape()[1].value();
  // weight^T as a contiguous [in, out] matrix, so gemm's inner loop runs along memory.
  const detail::Strides& ws = weight.strides();
  const Tensor wt = detail::contiguous_copy(
      Tensor::view_of(weight, Shape{in_features, out_features}, detail::Strides{ws[1], ws[0]}, weight.storage_offset()));
  Tensor out = detail::empty_like_meta(meta.outputs[0]);
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < x.shape().rank(); ++i) rows *= x.shape()[i].value();
  float* po = out.data_ptr<float>();
  if (bias) {  // start every row from the bias and accumulate the product onto it
    const Tensor b = detail::contiguous_copy(*bias);
    const float* pb = b.data_ptr<float>();
    for (std::int64_t r = 0; r < rows; ++r) std::copy_n(pb, out_features, po + r * out_features);
  }
  detail::gemm(rows, out_features, in_features, x.data_ptr<float>(), in_features, wt.data_ptr<float>(), out_features,
               po, out_features, /*accumulate=*/bias != nullptr);
  return out;
}

}  // namespace

void detail::register_linalg_ops(OpRegistry& r) {
  r.add("matmul(Tensor self, Tensor other) -> Tensor", matmul_meta, matmul_kernel);
  r.add("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", linear_meta, linear_kernel,
        OpFlags::channel_mixing);
}

// ---- Typed API ---------------------------------------------------------------------------

using detail::invoke;
using detail::fn;

Tensor matmul(const Tensor& a, const Tensor& b, Where w) { return invoke(SYMTRACE_OP("matmul"), w, fn, a, b); }
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias, Where w) {
  return invoke(SYMTRACE_OP("linear"), w, fn, input, weight, detail::optional_tensor_value(bias));
}

}  // namespace symtrace
