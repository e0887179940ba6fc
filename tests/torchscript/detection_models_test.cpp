// torchvision's detection models, scripted by tests/torchscript/make_models.py (seeded random
// weights, on an image where they find a few tens of objects): symtrace's eager forward finds
// the boxes LibTorch finds.
#include "support/checks.hpp"
#include "torchscript/model_files.hpp"

#include <symtrace/robust/detail/synthetic_run.hpp>
#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

const std::vector<std::string> detectors = {"fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
                                            "ssdlite320_mobilenet_v3_large", "maskrcnn_resnet50_fpn"};

bool close(double a, double b, double rel = 1e-4) { return std::abs(a - b) <= rel * std::max(1.0, std::abs(b)); }

const ValueDict& first_image_detections(const Value& out) {
  // (losses, detections): scripted detection models always return both.
  REQUIRE(out.is_list());
  REQUIRE(out.to_list().size() == 2);
  const ValueList& images = out.to_list()[1].to_list();
  REQUIRE(images.size() == 1);
  REQUIRE(images[0].is_dict());
  return images[0].to_dict();
}

// `a` and `b` have the same structure, and their tensors the same dtypes and shapes and values
// within 1e-5 (relative).
void check_same(const Value& a, const Value& b) {
  REQUIRE(a.kind() == b.kind());
  if (a.is_tensor()) {
    REQUIRE(a.to_tensor().meta() == b.to_tensor().meta());
    CHECK(max_rel_error(a.to_tensor(), b.to_tensor()) <= 1e-5);
  } else if (a.is_list()) {
    REQUIRE(a.to_list().size() == b.to_list().size());
    for (std::size_t i = 0; i < a.to_list().size(); ++i) check_same(a.to_list()[i], b.to_list()[i]);
  } else if (a.is_dict()) {
    REQUIRE(to_string(Value(a.to_dict().keys)) == to_string(Value(b.to_dict().keys)));
    for (std::size_t i = 0; i < a.to_dict().size(); ++i) check_same(a.to_dict().values[i], b.to_dict().values[i]);
  } else {
    CHECK(to_string(a) == to_string(b));
  }
}

// `spec` with each unknown dim made `size`.
InputSpec with_unknown_dims_as(InputSpec spec, std::int64_t size) {
  for (InputSpec& e : spec.elements) e = with_unknown_dims_as(std::move(e), size);
  if (spec.is_tensor() && spec.shape.is_rank_known())
    for (std::size_t d = 0; d < spec.shape.rank(); ++d)
      if (!spec.shape[d].is_known()) spec.shape[d] = Dim(size);
  return spec;
}

const Tensor& entry(const ValueDict& d, const char* key) {
  const Value* v = d.find(Value(std::string(key)));
  REQUIRE_MESSAGE(v != nullptr, key);
  REQUIRE(v->is_tensor());
  return v->to_tensor();
}

// The detections equal LibTorch's: each of symtrace's, from the highest score, is paired with
// one of LibTorch's of the same label whose score agrees within 1e-4 (relative) and whose box
// corners within 1e-4 of the image's size (coordinates are relative to the image: a box a
// tenth of a pixel high has corners 1e-4 apart in relative terms), so that scores equal to
// 1e-7 may come in either order. Returns LibTorch's index for each.
std::vector<std::size_t> check_detections(const ValueDict& d, const nlohmann::json& m) {
  const auto input = m["input"].get<IntList>();
  const double image_size = static_cast<double>(std::max(input.at(1), input.at(2)));
  const auto expected_scores = m["scores"].get<std::vector<float>>();
  const auto expected_labels = m["labels"].get<std::vector<std::int64_t>>();
  const auto expected_boxes = m["boxes"].get<std::vector<std::vector<float>>>();
  const std::vector<float> scores = entry(d, "scores").to_vector<float>();
  const std::vector<std::int64_t> labels = entry(d, "labels").to_vector<std::int64_t>();
  const std::vector<float> boxes = entry(d, "boxes").to_vector<float>();
  REQUIRE(scores.size() == expected_scores.size());
  REQUIRE(labels.size() == expected_labels.size());
  REQUIRE(boxes.size() == 4 * expected_boxes.size());
  CHECK(std::is_sorted(scores.rbegin(), scores.rend()));  // highest first, as torchvision returns them
  std::vector<bool> taken(expected_scores.size(), false);
  std::vector<std::size_t> pairs;
  for (std::size_t a = 0; a < scores.size(); ++a) {
    std::size_t found = expected_scores.size();
    for (std::size_t b = 0; b < expected_scores.size() && found == expected_scores.size(); ++b) {
      bool same = !taken[b] && close(scores[a], expected_scores[b]) && labels[a] == expected_labels[b];
      for (std::size_t c = 0; c < 4; ++c) same = same && std::abs(boxes[4 * a + c] - expected_boxes[b][c]) <= 1e-4 * image_size;
      if (same) found = b;
    }
    CHECK_MESSAGE(found < expected_scores.size(),
                  fmt::format("detection {} (score {}, label {}, box [{}, {}, {}, {}]) is not among LibTorch's", a,
                              scores[a], labels[a], boxes[4 * a], boxes[4 * a + 1], boxes[4 * a + 2], boxes[4 * a + 3]));
    if (found < expected_scores.size()) taken[found] = true;
    pairs.push_back(found);
  }
  return pairs;
}

}  // namespace

TEST_CASE("torchvision's detection models find the objects LibTorch finds, eagerly") {
  for (const std::string& name : detectors) {
    CAPTURE(name);
    const nlohmann::json m = meta(name);
    std::shared_ptr<Module> model = torchscript::load(models / fmt::format("{}.script.pt", name));
    CHECK(model->num_parameters() == m["parameters"].get<std::int64_t>());
    const Tensor image = read_floats(models / fmt::format("{}.input.bin", name), m["input"].get<IntList>());
    REQUIRE(m["scores"].size() >= 20);  // the image was chosen so that there are detections

    const Value out = model->call({Value(ValueList{Value(image)})});
    const ValueDict& d = first_image_detections(out);
    const std::vector<std::size_t> pairs = check_detections(d, m);
    if (!m["masks"].is_null()) {
      // Masks are probabilities, compared with each detection's pair. torchvision pastes a
      // mask into the image along its box, rounding the box to whole pixels, and random weights
      // make many boxes slivers under a pixel high, whose masks a thousandth of a pixel moves by
      // a pixel: so the masks are compared on average (and each within 0.05), not pixel by pixel.
      const IntList mask_shape = m["masks"].get<IntList>();
      const std::vector<float> expected = read_floats(models / fmt::format("{}.masks.bin", name), mask_shape).to_vector<float>();
      const Tensor& masks = entry(d, "masks");
      REQUIRE(masks.shape() == Shape(mask_shape));
      const std::vector<float> ours = masks.to_vector<float>();
      const std::size_t per_mask = ours.size() / pairs.size();
      double worst = 0, total = 0;
      for (std::size_t a = 0; a < pairs.size(); ++a) {
        if (pairs[a] >= pairs.size()) continue;
        for (std::size_t k = 0; k < per_mask; ++k) {
          const double e = std::abs(ours[a * per_mask + k] - expected[pairs[a] * per_mask + k]);
          worst = std::max(worst, e);
          total += e;
        }
      }
      CHECK(total / static_cast<double>(ours.size()) <= 1e-6);
      CHECK(worst <= 0.05);
    }
  }
}

TEST_CASE("torchvision's detection models traced robustly: failures where sizes come from the data, "
          "the root graph run by the interpreter finds what LibTorch finds") {
  for (const std::string& name : detectors) {
    CAPTURE(name);
    const nlohmann::json m = meta(name);
    std::shared_ptr<Module> model = torchscript::load(models / fmt::format("{}.script.pt", name));
    const IntList image_shape = m["input"].get<IntList>();
    const Tensor image = read_floats(models / fmt::format("{}.input.bin", name), image_shape);

    GraphCollection c = recursive_trace(*model, {InputSpec::list({Shape(image_shape)})});
    REQUIRE(!c.failures().empty());
    // Every failure is the model's own control flow on sizes the data decides, at torchvision's
    // line; none is for want of an op or of inputs (children whose calls passed dicts and
    // objects of tensors, or that the trace never reached, get the inputs of their calls).
    std::vector<std::string> data_dependent;
    for (const ModuleFailure& f : c.failures()) {
      CAPTURE(to_string(f));
      CHECK(f.kind == "TraceError");
      CHECK(std::string_view(f.where.file_name()).find("/torchvision/") != std::string_view::npos);
      CHECK(f.message.find("unknown at trace time") != std::string::npos);
      data_dependent.push_back(f.module);
    }
    CHECK(!data_dependent.empty());
    MESSAGE(fmt::format("{}: data-dependent failures: {}", name, fmt::join(data_dependent, ", ")));

    // Each child traced as a root on the inputs of its call (an ImageList, a dict of feature
    // maps, lists of boxes whose number the data decides: 5 of them here) computes what its
    // eager forward does.
    std::vector<std::string> checked;
    for (const GraphCollection::Entry& e : c) {
      if (e.path.empty() || c.is_failed(*e.module)) continue;
      CAPTURE(e.path);
      const std::optional<ObservedCall> seen = c.records().observed_call(*e.module);
      REQUIRE(seen.has_value());
      Generator gen(7);
      ValueList args;
      std::size_t t = 0, v = 0;
      for (std::size_t i = 0; t < seen->tensors.size() || v < seen->values.size(); ++i) {
        if (v < seen->values.size() && seen->values[v].first == i) args.push_back(seen->values[v++].second);
        else args.push_back(symtrace::detail::synthetic_input(with_unknown_dims_as(seen->tensors[t++], 5), gen));
      }
      const Value eager = e.module->call(args);
      const Value traced = Interpreter(*e.module, e.graph).run(args);
      check_same(traced, eager);
      checked.push_back(e.path);
    }
    MESSAGE(fmt::format("{}: children traced as roots, checked against eager: {}", name, fmt::join(checked, ", ")));
    CHECK(std::any_of(checked.begin(), checked.end(), [](const std::string& p) { return p.ends_with("anchor_generator"); }));

    // The root is traced; the backbone lies in its graph with torch.fx's granularity (its
    // layers are call_module nodes).
    const bool root_failed = std::any_of(c.failures().begin(), c.failures().end(),
                                         [](const ModuleFailure& f) { return f.module.empty(); });
    // Faster R-CNN post-processes in modules of its own, so its root is traced.
    CHECK(root_failed == (name != "fasterrcnn_mobilenet_v3_large_320_fpn"));
    if (root_failed) {
      // RetinaNet and SSD post-process in the root's own forward, Mask R-CNN splits its masks by
      // counts from the data there: the root's graph is its one leaf, and each of its children
      // (backbone, anchor generator, heads, transform) is a graph of its own.
      for (const auto& [child_name, child] : model->named_children()) CHECK_MESSAGE(c.find(*child) != nullptr, child_name);
      const Graph* root = c.find(*model);
      REQUIRE(root != nullptr);
      check_detections(first_image_detections(Interpreter(*model, *root).run({Value(ValueList{Value(image)})})), m);
      continue;
    }
    const Graph* root = c.find(*model);
    REQUIRE(root != nullptr);
    CHECK_NOTHROW(root->lint());
    int convolutions = 0;
    for (const Node& n : root->nodes())
      convolutions += n.op() == OpKind::call_module && model->get_submodule(n.target()).type_name() == "Conv2d";
    CHECK(convolutions > 10);

    // The interpreter on the root graph, failed modules run eagerly as leaves.
    const Value out = Interpreter(*model, *root).run({Value(ValueList{Value(image)})});
    check_detections(first_image_detections(out), m);
  }
}
