// OnnxBuilder: unique value names, nodes, constants, initializers and typed value infos.
#include "export/onnx_builder.hpp"

#include "symtrace/core/factories.hpp"

#include <fmt/format.h>

#include <cstring>

namespace symtrace::detail {

namespace {

void set_type(onnx::TypeProto& type, const TensorMeta& meta) {
  onnx::TypeProto_Tensor& tensor = *type.mutable_tensor_type();
  tensor.set_elem_type(onnx_elem_type(meta.dtype));
  if (!meta.shape.is_rank_known()) return;
  onnx::TensorShapeProto& shape = *tensor.mutable_shape();
  for (Dim d : meta.shape) {
    onnx::TensorShapeProto_Dimension& dim = *shape.add_dim();
    // A named dim's expression is its dim_param ("N", "H//4"); an anonymous size stays unset,
    // as ONNX allows.
    if (d.is_known()) dim.set_dim_value(d.value());
    else if (d.is_symbolic()) dim.set_dim_param(to_string(d));
  }
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());  // ONNX's raw_data is little-endian, as x86 and ARM are
  return bytes;
}

}  // namespace

int onnx_elem_type(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return onnx::TensorProto::FLOAT;
    case DType::int64: return onnx::TensorProto::INT64;
    case DType::bool_: return onnx::TensorProto::BOOL;
    case DType::complex64: return onnx::TensorProto::COMPLEX64;
    default: break;  // quantized: ONNX has no such element type (QuantizeLinear gives uint8)
  }
  return onnx::TensorProto::UNDEFINED;
}

onnx::TensorProto onnx_tensor(const Tensor& value, const std::string& name) {
  onnx::TensorProto t;
  if (!name.empty()) t.set_name(name);
  t.set_data_type(onnx_elem_type(value.dtype()));
  for (std::int64_t size : value.shape().sizes()) t.add_dims(size);
  switch (value.dtype()) {
    case DType::float32: t.set_raw_data(raw_bytes(value.to_vector<float>())); break;
    case DType::int64: t.set_raw_data(raw_bytes(value.to_vector<std::int64_t>())); break;
    case DType::bool_: {
      std::vector<std::uint8_t> bytes;
      for (double v : value.to_vector<double>()) bytes.push_back(v != 0 ? 1 : 0);
      t.set_raw_data(raw_bytes(bytes));
      break;
    }
    default:
      throw std::invalid_argument(
          fmt::format("ONNX export cannot write the tensor '{}': it is a {} tensor (float32, int64 and bool are written)",
                      name, value.dtype()));
  }
  return t;
}

void set_attribute(onnx::NodeProto& node, std::string_view name, std::int64_t value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(std::string(name));
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

void set_attribute(onnx::NodeProto& node, std::string_view name, double value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(std::string(name));
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(static_cast<float>(value));
}

void set_attribute(onnx::NodeProto& node, std::string_view name, const std::vector<std::int64_t>& values) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(std::string(name));
  a.set_type(onnx::AttributeProto::INTS);
  for (std::int64_t v : values) a.add_ints(v);
}

OnnxBuilder::OnnxBuilder() = default;

bool OnnxBuilder::reserve(const std::string& name) { return taken_.insert(name).second; }

std::string OnnxBuilder::fresh(std::string_view base) {
  std::string name(base.empty() ? std::string_view("v") : base);
  for (std::size_t n = 1; !taken_.insert(name).second; ++n) name = fmt::format("{}_{}", base, n);
  return name;
}

onnx::NodeProto& OnnxBuilder::node(std::string_view op_type, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs) {
  onnx::NodeProto& n = *graph().add_node();
  n.set_op_type(std::string(op_type));
  for (const std::string& in : inputs) n.add_input(in);
  for (const std::string& out : outputs) n.add_output(out);
  if (!outputs.empty()) n.set_name(outputs.front());
  return n;
}

std::string OnnxBuilder::node1(std::string_view op_type, const std::vector<std::string>& inputs,
                               std::string_view base) {
  std::string out = fresh(base);
  node(op_type, inputs, {out});
  return out;
}

std::string OnnxBuilder::constant_tensor(const Tensor& value, std::string_view base) {
  std::string out = fresh(base);
  onnx::NodeProto& n = node("Constant", {}, {out});
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name("value");
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = onnx_tensor(value, "");
  return out;
}

std::string OnnxBuilder::constant_ints(const std::vector<std::int64_t>& values, std::string_view base, bool scalar) {
  if (scalar) return constant_tensor(scalar_tensor(values.at(0), DType::int64), base);
  return constant_tensor(tensor(values, {static_cast<std::int64_t>(values.size())}), base);
}

std::string OnnxBuilder::constant_scalar(double value, DType dtype, std::string_view base) {
  return constant_tensor(scalar_tensor(value, dtype), base);
}

void OnnxBuilder::initializer(const std::string& name, const Tensor& value) {
  *graph().add_initializer() = onnx_tensor(value, name);
}

void OnnxBuilder::input(const std::string& name, const TensorMeta& meta) {
  onnx::ValueInfoProto& v = *graph().add_input();
  v.set_name(name);
  set_type(*v.mutable_type(), meta);
}

void OnnxBuilder::output(const std::string& name, const TensorMeta* meta) {
  onnx::ValueInfoProto& v = *graph().add_output();
  v.set_name(name);
  if (meta != nullptr) set_type(*v.mutable_type(), *meta);
}

void OnnxBuilder::value_info(const std::string& name, const TensorMeta& meta) {
  onnx::ValueInfoProto& v = *graph().add_value_info();
  v.set_name(name);
  set_type(*v.mutable_type(), meta);
}

}  // namespace symtrace::detail
