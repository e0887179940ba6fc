// TorchScript builtins that make or read tensors by composing registry ops, or that ask what a
// value is: `torch.tensor([...])`, `arange`, `meshgrid`, `expand_as`, `torch.where(cond)`,
// `item()`, `tolist()`, `is_floating_point()`, `isinstance`, and the objects of TorchScript
// classes (`ImageList`), which are dicts of their attributes here.
#include "torchscript/builtin_util.hpp"

#include "symtrace/core/sym_int.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace symtrace::torchscript::detail {

namespace {

// ---- reading tensors ----------------------------------------------------------------------

void is_floating_point(const Instr& i, Value* frame) {
  out(i, frame) = in(i, frame, 0).to_tensor().dtype() == DType::float32;
}
void is_complex(const Instr& i, Value* frame) { out(i, frame) = in(i, frame, 0).to_tensor().dtype() == DType::complex64; }
void is_quantized_tensor(const Instr& i, Value* frame) { out(i, frame) = is_quantized(in(i, frame, 0).to_tensor().dtype()); }

// tensor.item(): the number a one-element tensor holds (TraceError when symbolic).
void item(const Instr& i, Value* frame) { out(i, frame) = as_number(i, in(i, frame, 0)); }

template <class T>
Value nested(const std::vector<T>& data, const IntList& sizes, std::size_t d, std::size_t& at) {
  if (d == sizes.size()) {
    if constexpr (std::is_same_v<T, float>) return static_cast<double>(data[at++]);
    else return data[at++];
  }
  ValueList l;
  l.reserve(static_cast<std::size_t>(sizes[d]));
  for (std::int64_t k = 0; k < sizes[d]; ++k) l.push_back(nested(data, sizes, d + 1, at));
  return l;
}

// prim::tolist(tensor, dim, elem_type): nested lists of numbers (TraceError when symbolic).
void tolist(const Instr& i, Value* frame) {
  const Tensor& t = in(i, frame, 0).to_tensor();
  std::size_t at = 0;
  switch (t.dtype()) {  // data first: reading a symbolic tensor is the TraceError
    case DType::float32: {
      const std::vector<float> data = t.to_vector<float>(i.where);
      out(i, frame) = nested(data, t.shape().sizes(), 0, at);
      return;
    }
    case DType::int64: {
      const std::vector<std::int64_t> data = t.to_vector<std::int64_t>(i.where);
      out(i, frame) = nested(data, t.shape().sizes(), 0, at);
      return;
    }
    case DType::bool_: {
      std::vector<bool> flags;
      for (std::int64_t v : t.to(DType::int64, i.where).to_vector<std::int64_t>(i.where)) flags.push_back(v != 0);
      out(i, frame) = nested(flags, t.shape().sizes(), 0, at);
      return;
    }
    default:
      (void)t.data_ptr(i.where);  // a symbolic tensor's TraceError first
      symtrace::detail::throw_not_computed(t.dtype());
  }
}

// ---- making tensors -----------------------------------------------------------------------

// Shape and elements of a nested list of numbers, row-major; `kind` the widest element kind
// (bool < int < float, as torch.tensor infers a dtype).
void flatten_numbers(const Instr& i, const Value& v, std::size_t depth, IntList& shape, std::vector<Value>& flat,
                     DType& kind) {
  if (!v.is_list()) {
    if (depth != shape.size()) throw_invalid_argument(i.where, "torch.tensor: the nested lists are ragged");
    Value n = v.is_symint()     ? Value(v.to_sym_int().value(i.where))
              : v.is_symfloat() ? Value(v.to_sym_float().value(i.where))
                                : as_number(i, v);
    if (!n.is_number())
      throw_invalid_argument(i.where, "torch.tensor takes numbers and lists of them, not {}", n.type_name());
    if (n.is_double()) kind = DType::float32;
    else if (n.is_int() && kind == DType::bool_) kind = DType::int64;
    flat.push_back(std::move(n));
    return;
  }
  const ValueList& l = v.to_list();
  if (depth == shape.size()) shape.push_back(static_cast<std::int64_t>(l.size()));
  else if (shape[depth] != static_cast<std::int64_t>(l.size()))
    throw_invalid_argument(i.where, "torch.tensor: the nested lists are ragged");
  for (const Value& e : l) flatten_numbers(i, e, depth + 1, shape, flat, kind);
}

// aten::tensor(t[] data, dtype=None, ...) and aten::as_tensor.list: a concrete tensor of the
// numbers (a size only the run knows is read, so it fails where the model reads it).
void tensor_of_list(const Instr& i, Value* frame) {
  IntList shape;
  std::vector<Value> flat;
  DType kind = DType::bool_;
  flatten_numbers(i, in(i, frame, 0), 0, shape, flat, kind);
  if (flat.empty()) kind = DType::float32;  // torch.tensor([]) is float
  const Value& given = i.inputs.size() > 1 ? in(i, frame, 1) : Value();
  const DType dtype = given.is_none() ? kind : scalar_type_to_dtype(given.to_int());
  Tensor t = Tensor::empty(Shape(shape), dtype, i.where);
  for (std::size_t k = 0; k < flat.size(); ++k) {
    const Value& n = flat[k];
    switch (dtype) {
      case DType::float32: t.data_ptr<float>()[k] = static_cast<float>(n.is_double() ? n.to_double() : static_cast<double>(n.is_bool() ? n.to_bool() : n.to_int())); break;
      case DType::int64:
        t.data_ptr<std::int64_t>()[k] = n.is_double() ? static_cast<std::int64_t>(n.to_double()) : n.is_bool() ? n.to_bool()
                                                                                                               : n.to_int();
        break;
      case DType::bool_:
        t.data_ptr<bool>()[k] = n.is_double() ? n.to_double() != 0.0 : n.is_bool() ? n.to_bool()
                                                                                   : n.to_int() != 0;
        break;
      default: symtrace::detail::throw_not_computed(dtype);
    }
  }
  out(i, frame) = std::move(t);
}

// aten::arange(end, dtype, ...), arange.start(start, end, dtype, ...) and
// arange.start_step(start, end, step, dtype, ...): the registry's arange. The overloads are
// told apart by their number of inputs (5, 6 and 7: dtype, layout, device, pin_memory follow).
void arange(const Instr& i, Value* frame) {
  const std::size_t n = i.inputs.size();
  if (n < 5 || n > 7) throw_op_error("arange", i.where, "an overload of aten::arange with {} arguments", n);
  const Value start = n == 5 ? Value(std::int64_t{0}) : in(i, frame, 0);
  const Value end = in(i, frame, n == 5 ? 0 : 1);
  const Value step = n == 7 ? in(i, frame, 2) : Value(std::int64_t{1});
  const Value& given = in(i, frame, n - 4);
  const Value dtype = given.is_none() ? Value() : Value(scalar_type_to_dtype(given.to_int()));
  out(i, frame) = call_op("arange", {start, end, step, dtype}, i.where);
}

// tensor.expand_as(other): expand to other's sizes.
void expand_as(const Instr& i, Value* frame) {
  const SymIntList sizes = in(i, frame, 1).to_tensor().sizes(i.where);
  ValueList shape(sizes.begin(), sizes.end());
  out(i, frame) = call_op("expand", {in(i, frame, 0), Value(std::move(shape))}, i.where);
}

// torch.meshgrid(tensors, indexing): each 1-D tensor viewed along its own dim and expanded to
// all the sizes ("ij"); "xy" swaps the first two inputs and the first two outputs.
void meshgrid(const Instr& i, Value* frame) {
  ValueList tensors = in(i, frame, 0).to_list();
  const std::string indexing = i.inputs.size() > 1 && in(i, frame, 1).is_string() ? in(i, frame, 1).to_string_ref() : "ij";
  if (indexing != "ij" && indexing != "xy")
    throw_op_error("meshgrid", i.where, "indexing must be 'ij' or 'xy', got '{}'", indexing);
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(tensors[0], tensors[1]);
  ValueList sizes;
  for (const Value& t : tensors) {
    if (t.to_tensor().dim(i.where) > 1)
      throw_op_error("meshgrid", i.where, "expects 0-D or 1-D tensors, got one of shape {}", t.to_tensor().shape());
    sizes.push_back(Value(t.to_tensor().numel(i.where)));
  }
  ValueList grids;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    ValueList view(tensors.size(), Value(std::int64_t{1}));
    view[k] = Value(std::int64_t{-1});
    Value viewed = call_op("reshape", {tensors[k], Value(std::move(view))}, i.where);
    grids.push_back(call_op("expand", {std::move(viewed), Value(sizes)}, i.where));
  }
  if (swap) std::swap(grids[0], grids[1]);
  out(i, frame) = std::move(grids);
}

// torch.where(condition): the indices of the nonzero elements, one int64 tensor per dim.
void where_nonzero(const Instr& i, Value* frame) {
  Value condition = in(i, frame, 0);
  if (condition.to_tensor().dim(i.where) == 0)  // as PyTorch: a 0-dim condition is one element
    condition = call_op("reshape", {std::move(condition), Value(IntList{1})}, i.where);
  Value indices = call_op("nonzero", {std::move(condition)}, i.where);
  out(i, frame) = call_op("unbind", {std::move(indices), std::int64_t{1}}, i.where);
}

// tensor.split(split_sizes: List[int], dim): split_with_sizes.
void split_sizes(const Instr& i, Value* frame) {
  out(i, frame) = call_op("split_with_sizes", {in(i, frame, 0), in(i, frame, 1), in(i, frame, 2)}, i.where);
}

// aten::_unique2(self, sorted, return_inverse, return_counts): the registry's unique_sorted;
// PyTorch's CPU kernel gives an unspecified order when not sorted, which symtrace does not copy.
void unique2(const Instr& i, Value* frame) {
  if (!in(i, frame, 1).to_bool())
    throw_op_error("_unique2", i.where, "torch.unique(sorted=False) is not supported by symtrace; use sorted=True");
  Value r = call_op("unique_sorted", {in(i, frame, 0), in(i, frame, 2), in(i, frame, 3)}, i.where);
  const ValueList& parts = r.to_list();
  for (std::size_t k = 0; k < i.outputs.size() && k < parts.size(); ++k) out(i, frame, k) = parts[k];
}

// tensor.zero_()
void zero_(const Instr& i, Value* frame) { out(i, frame) = call_op("fill_", {in(i, frame, 0), std::int64_t{0}}, i.where); }

// torch.max(a, b) / torch.min(a, b): elementwise, NaN wins (as torch.maximum).
template <bool Max>
void extremum(const Instr& i, Value* frame) {
  const Value& a = in(i, frame, 0);
  const Value& b = in(i, frame, 1);
  Value a_wins = call_op(Max ? "ge" : "le", {a, b}, i.where);
  Value a_nan = call_op("ne", {a, a}, i.where);
  a_wins = call_op("bitwise_or", {std::move(a_wins), std::move(a_nan)}, i.where);
  out(i, frame) = call_op("where", {std::move(a_wins), a, b}, i.where);
}

// ---- what a value is ----------------------------------------------------------------------

// Whether `v` is of the TorchScript type `type` ("Tensor", "List[Tensor]", "Dict[str, int]",
// "Tuple[int, Tensor]", "Optional[Tensor]"). symtrace's values keep no element types, so a
// container's elements are looked at: an empty list is a list of anything.
bool is_of_type(const Value& v, std::string_view type);

// The comma-separated parameters of `Name[...]` (nested brackets kept whole).
std::vector<std::string_view> type_parameters(std::string_view type) {
  std::vector<std::string_view> out;
  const std::size_t open = type.find('[');
  if (open == std::string_view::npos || type.back() != ']') return out;
  std::string_view inner = type.substr(open + 1, type.size() - open - 2);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t k = 0; k <= inner.size(); ++k) {
    if (k == inner.size() || (inner[k] == ',' && depth == 0)) {
      std::string_view part = inner.substr(start, k - start);
      while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
      out.push_back(part);
      start = k + 1;
    } else if (inner[k] == '[') {
      ++depth;
    } else if (inner[k] == ']') {
      --depth;
    }
  }
  return out;
}

bool is_of_type(const Value& v, std::string_view type) {
  const std::string_view base = type.substr(0, type.find('['));
  const std::vector<std::string_view> params = type_parameters(type);
  if (base == "List" && params.size() == 1)
    return v.is_list() && std::all_of(v.to_list().begin(), v.to_list().end(), [&](const Value& e) { return is_of_type(e, params[0]); });
  if (base == "Tuple") {
    if (!v.is_list() || v.to_list().size() != params.size()) return false;
    for (std::size_t k = 0; k < params.size(); ++k)
      if (!is_of_type(v.to_list()[k], params[k])) return false;
    return true;
  }
  if (base == "Dict" && params.size() == 2) {
    if (!v.is_dict()) return false;
    const ValueDict& d = v.to_dict();
    for (std::size_t k = 0; k < d.keys.size(); ++k)
      if (!is_of_type(d.keys[k], params[0]) || !is_of_type(d.values[k], params[1])) return false;
    return true;
  }
  if (base == "Optional" && params.size() == 1) return v.is_none() || is_of_type(v, params[0]);
  return ((base == "list" || base == "tuple") && v.is_list()) || (base == "Tensor" && v.is_tensor()) ||
         (base == "int" && (v.is_int() || v.is_symint())) || (base == "float" && (v.is_double() || v.is_symfloat())) ||
         (base == "bool" && v.is_bool()) || (base == "str" && v.is_string()) || (base == "NoneType" && v.is_none()) ||
         (base == "dict" && v.is_dict());
}

// prim::isinstance[types=[...]](x): the type names are in `i.constant` (a list of strings).
void isinstance(const Instr& i, Value* frame) {
  const Value& v = in(i, frame, 0);
  bool yes = false;
  for (const Value& t : i.constant.to_list()) yes = yes || is_of_type(v, t.to_string_ref());
  out(i, frame) = yes;
}

// prim::type(device): the device type, "cpu" for every device symtrace runs on.
void device_type(const Instr& i, Value* frame) { out(i, frame) = std::string("cpu"); }

// ---- objects of TorchScript classes -------------------------------------------------------

// A new object: a dict of its attributes, shared by reference (Note [Lists and dicts are
// references]).
void create_object(const Instr& i, Value* frame) { out(i, frame) = share(ValueDict{}); }

// object.attr, the attribute's name in `i.text`.
void object_attr(const Instr& i, Value* frame) {
  const Value& obj = in(i, frame, 0);
  if (!obj.is_dict()) throw_invalid_argument(i.where, "attribute '{}' of {}, which is not an object", i.text, obj.type_name());
  const Value* v = obj.to_dict().find(Value(i.text));
  if (v == nullptr) throw_invalid_argument(i.where, "the object has no attribute '{}' set", i.text);
  Value copy = *v;
  out(i, frame) = std::move(copy);
}

// object.attr = value, in the object's slot.
void set_object_attr(const Instr& i, Value* frame) {
  Value v = stored(i, frame, 1);
  mutable_dict(i, frame, 0).insert_or_assign(Value(i.text), std::move(v));
}

}  // namespace

void add_tensor_builtins(BuiltinTable& t) {
  t.insert({
      {"aten::is_floating_point", is_floating_point},
      {"aten::is_complex", is_complex},
      {"prim::is_quantized", is_quantized_tensor},
      {"aten::item", item},
      {"prim::tolist", tolist},
      {"aten::tensor", tensor_of_list},
      {"aten::as_tensor.list", tensor_of_list},
      {"aten::arange", arange},
      {"aten::expand_as", expand_as},
      {"aten::meshgrid", meshgrid},
      {"aten::meshgrid.indexing", meshgrid},
      {"aten::where", where_nonzero},
      {"aten::zero_", zero_},
      {"aten::_unique2", unique2},
      {"aten::split", split_sizes},
      {"aten::split.sizes", split_sizes},
      {"aten::max.other", extremum<true>},
      {"aten::min.other", extremum<false>},
      {"prim::isinstance", isinstance},
      {"prim::type", device_type},
      {"prim::CreateObject", create_object},
      {"prim::GetAttr.object", object_attr},
      {"prim::SetAttr.object", set_object_attr},
  });
}

}  // namespace symtrace::torchscript::detail
