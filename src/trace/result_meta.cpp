// Results: the metadata of a module's nested result (OutputMeta::nesting) made from a value,
// and the symbolic values that stand for a node's outputs made from metadata (a proxy per
// tensor, a getitem node per list or dict item).
#include "symtrace/trace/detail/result_meta.hpp"

#include "symtrace/core/tensor.hpp"
#include "symtrace/trace/tracer.hpp"
#include "symtrace/trace/tracing_state.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace symtrace {

bool detail::flatten_result(const Value& v, OutputMeta& meta) {
  if (const Tensor* t = boost::variant2::get_if<Tensor>(&v.value)) {
    if (!t->defined()) return false;
    meta.outputs.push_back(t->meta());
    meta.nesting.push_back(0);
    return true;
  }
  if (v.is_none()) {
    meta.nesting.push_back(-1);
    return true;
  }
  if (const ValueDict* dict = boost::variant2::get_if<ValueDict>(&v.value)) {
    meta.nesting.push_back(-3);
    meta.nesting.push_back(static_cast<std::int32_t>(dict->size()));
    for (std::size_t k = 0; k < dict->size(); ++k) {
      if (!dict->keys[k].is_string()) return false;
      meta.keys.push_back(dict->keys[k].to_string_ref());
      if (!flatten_result(dict->values[k], meta)) return false;
    }
    return true;
  }
  const ValueList* list = boost::variant2::get_if<ValueList>(&v.value);
  if (list == nullptr) return false;
  meta.nesting.push_back(list->empty() ? -2 : static_cast<std::int32_t>(list->size()));
  for (const Value& item : *list)
    if (!flatten_result(item, meta)) return false;
  return true;
}

namespace {

/// The Value a nested result's metadata describes, from the list or dict at
/// `meta.nesting[pos]` (`list`: the node of that container in a traced call, nullptr in a side
/// run). `item(list, key)` gives the node of an item (a getitem; `key` an int64 index or a str
/// key) and `tensor(item, m)` the tensor it stands for. `key` counts the dict keys used.
template <class List, class MakeTensor, class Item>
Value unflatten_result(const OutputMeta& meta, std::size_t& pos, std::size_t& next, std::size_t& key, List list,
                       const MakeTensor& tensor, const Item& item) {
  const std::int32_t code = meta.nesting.at(pos++);
  const bool dict = code == -3;
  const std::size_t n = dict ? static_cast<std::size_t>(meta.nesting.at(pos++)) : code > 0 ? static_cast<std::size_t>(code)
                                                                                           : 0;
  ValueList items;
  ValueDict entries;
  items.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string* name = dict ? &meta.keys.at(key++) : nullptr;
    const Argument at = name ? Argument(*name) : Argument(static_cast<std::int64_t>(i));
    const std::int32_t c = meta.nesting.at(pos);
    Value v;
    if (c == -1) {
      ++pos;
    } else if (c == 0) {
      ++pos;
      v = tensor(item(list, at), meta.outputs.at(next++));
    } else {
      v = unflatten_result(meta, pos, next, key, item(list, at), tensor, item);
    }
    if (dict) entries.insert_or_assign(Value(*name), std::move(v));
    else items.push_back(std::move(v));
  }
  if (dict) return entries;
  return items;
}

// A number's proxy: a SymFloat for a float, else a SymInt (a comparison's, of dtype bool, is made
// a SymBool by the operator that recorded it).
Value number_proxy(const OutputMeta& meta, Tensor proxy, std::source_location where) {
  if (meta.outputs.at(0).dtype == DType::float32)
    return SymFloat::symbolic(std::move(proxy), where, meta.number_value, meta.number_denominator);
  return SymInt::symbolic(std::move(proxy), where, meta.number_value);
}

}  // namespace

Value Tracer::meta_result(const OutputMeta& meta, std::source_location where) const {
  // Node 0 is never read: nothing is recorded in a side run, and its tensors die with it.
  const SymbolicRef ref{state().id(), 0};
  if (meta.is_number) return number_proxy(meta, Tensor::symbolic(meta.outputs.at(0), ref), where);
  if (!meta.is_list) return Tensor::symbolic(meta.outputs.at(0), ref);
  if (!meta.nesting.empty()) {
    if (meta.nesting.front() == -1) return Value();  // None
    std::size_t pos = 0, next = 0, key = 0;
    return unflatten_result(
        meta, pos, next, key, nullptr, [&](std::nullptr_t, const TensorMeta& m) { return Tensor::symbolic(m, ref); },
        [](std::nullptr_t, const Argument&) { return nullptr; });
  }
  ValueList items;
  items.reserve(meta.outputs.size());
  for (const TensorMeta& m : meta.outputs) items.emplace_back(Tensor::symbolic(m, ref));
  return items;
}

Value Tracer::wrap_result(Node& node, const OutputMeta& meta, std::source_location where) {
  // A number (size arithmetic) travels as a proxy SymInt; a comparison's proxy has dtype bool
  // and is made a SymBool by the operator that recorded it.
  if (meta.is_number) {
    const TensorMeta& number = meta.outputs.at(0);
    node.set_meta(meta_keys::type, std::string(number.dtype == DType::bool_     ? "bool"
                                               : number.dtype == DType::float32 ? "float"
                                                                                : "int"));
    return number_proxy(meta, Tensor::symbolic(number, SymbolicRef{state().id(), node.id().value}), where);
  }
  if (!meta.is_list) return proxy(node, meta.outputs.at(0));
  if (!meta.nesting.empty()) {
    if (meta.nesting.front() == -1) return Value();  // a call that returns None: the node, no value
    std::size_t pos = 0, next = 0, key = 0;
    return unflatten_result(
        meta, pos, next, key, &node, [&](Node* item, const TensorMeta& m) { return proxy(*item, m); },
        [&](Node* list, const Argument& at) { return &create_node(OpKind::call_function, "getitem", {*list, at}, {}, where); });
  }
  ValueList items;
  items.reserve(meta.outputs.size());
  for (std::size_t i = 0; i < meta.outputs.size(); ++i) {
    Node& item = create_node(OpKind::call_function, "getitem", {node, static_cast<std::int64_t>(i)}, {}, where);
    items.emplace_back(proxy(item, meta.outputs[i]));
  }
  return items;
}

Tensor Tracer::proxy(Node& node, const TensorMeta& meta) const {
  node.set_tensor_meta(meta);
  return Tensor::symbolic(meta, SymbolicRef{state().id(), node.id().value});
}

}  // namespace symtrace
