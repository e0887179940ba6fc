// torchvision's detection models, scripted by tests/torchscript/make_models.py (seeded random
// weights, on an image where they find tens of objects and where none of their decisions is
// borderline): symtrace's eager forward finds the boxes LibTorch finds.
#include "support/checks.hpp"
#include "torchscript/model_files.hpp"

#include <symtrace/robust/detail/synthetic_run.hpp>
#include <symtrace/symtrace.hpp>
#include <symtrace/torchscript/load.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace symtrace;
using namespace symtrace::testing;

namespace {

const std::vector<std::string> detectors = {"fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
                                            "ssdlite320_mobilenet_v3_large", "maskrcnn_resnet50_fpn"};

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

// A model's detections in one image: scores (highest first), labels, boxes (x1, y1, x2, y2).
struct Detections {
  std::vector<float> scores;
  std::vector<std::int64_t> labels;
  std::vector<std::array<float, 4>> boxes;
};

Detections detections(const ValueDict& d) {
  Detections out{entry(d, "scores").to_vector<float>(), entry(d, "labels").to_vector<std::int64_t>(), {}};
  const std::vector<float> boxes = entry(d, "boxes").to_vector<float>();
  REQUIRE(boxes.size() == 4 * out.scores.size());
  for (std::size_t i = 0; i < boxes.size(); i += 4) out.boxes.push_back({boxes[i], boxes[i + 1], boxes[i + 2], boxes[i + 3]});
  return out;
}

/// LibTorch's, as make_models.py wrote them.
Detections expected_detections(const nlohmann::json& m) {
  return {m["scores"].get<std::vector<float>>(), m["labels"].get<std::vector<std::int64_t>>(),
          m["boxes"].get<std::vector<std::array<float, 4>>>()};
}

// How far each of LibTorch's detections may be from ours: its score (relative), each box corner
// (pixels) and each pixel of its mask. make_models.py measured the most that LibTorch's runs on
// weights perturbed by 1e-5 of themselves move each ("tolerances"), three to ten times what
// LibTorch's kernels for other processors move it, and checked that those runs find the same
// detections: no decision on the image (a score against a threshold, NMS's IoU against its own,
// a top-k cut) is close enough to going the other way for rounding to turn it. So any correct
// kernel finds the same detections, one for one, within twice those (twice: four runs show
// roughly, not exactly, the most a perturbation moves a value). The one decision left borderline
// is where a mask is pasted, to the pixel: those masks are listed apart.
struct Tolerances {
  std::vector<double> scores;
  std::vector<std::array<double, 4>> boxes;
  std::vector<double> masks;
  std::vector<std::size_t> borderline_masks;  // pasted near a pixel's edge: rounding may move them a pixel
};

Tolerances tolerances(const nlohmann::json& m) {
  REQUIRE_MESSAGE(m["unstable"].is_null(), "LibTorch's runs on slightly perturbed weights decide otherwise on this image ("
                                               << m["unstable"].dump() << "): choose another seed for it in make_models.py");
  const nlohmann::json& t = m["tolerances"];
  Tolerances out{t["scores"].get<std::vector<double>>(), t["boxes"].get<std::vector<std::array<double, 4>>>(), {}, {}};
  if (!t["masks"].is_null()) out.masks = t["masks"].get<std::vector<double>>();
  out.borderline_masks = t["borderline_masks"].get<std::vector<std::size_t>>();
  for (double& score : out.scores) score *= 2;
  for (std::array<double, 4>& box : out.boxes)
    for (double& corner : box) corner *= 2;
  for (double& mask : out.masks) mask *= 2;
  REQUIRE(out.scores.size() == m["scores"].size());
  REQUIRE(out.boxes.size() == m["scores"].size());
  return out;
}

struct Comparison {
  std::vector<std::size_t> pairs;  // for each of ours, the index of its match in theirs (or theirs.size())
  std::vector<std::string> differences;
  double worst = 0;   // the largest difference of a pair, in units of its tolerance
  std::string where;  // whose
};

// Pairs each of `ours`, from the highest score, with one of `theirs` of the same label, score and
// box within that one's tolerances (scores that close may come in either order); lists each one
// left without a pair, on either side.
Comparison compare(const Detections& ours, const Detections& theirs, const Tolerances& tol) {
  Comparison c;
  std::vector<bool> taken(theirs.scores.size(), false);
  const auto same = [&](std::size_t a, std::size_t b) {
    bool s = !taken[b] && ours.labels[a] == theirs.labels[b] &&
             std::abs(ours.scores[a] - theirs.scores[b]) <= tol.scores[b] * std::abs(theirs.scores[b]);
    for (std::size_t k = 0; k < 4; ++k) s = s && std::abs(ours.boxes[a][k] - theirs.boxes[b][k]) <= tol.boxes[b][k];
    return s;
  };
  const auto describe = [](const Detections& d, std::size_t i) {
    return fmt::format("score {}, label {}, box [{}]", d.scores[i], d.labels[i], fmt::join(d.boxes[i], ", "));
  };
  for (std::size_t a = 0; a < ours.scores.size(); ++a) {
    std::size_t b = 0;
    while (b < theirs.scores.size() && !same(a, b)) ++b;
    if (b < theirs.scores.size()) {
      taken[b] = true;
      const auto note = [&](double difference, double tolerance, const char* what) {
        if (difference / tolerance <= c.worst) return;
        c.worst = difference / tolerance;
        c.where = fmt::format("the {} of detection {}: {} where the tolerance is {}", what, a, difference, tolerance);
      };
      note(std::abs(ours.scores[a] - theirs.scores[b]), tol.scores[b] * std::abs(theirs.scores[b]), "score");
      for (std::size_t k = 0; k < 4; ++k)
        note(std::abs(ours.boxes[a][k] - theirs.boxes[b][k]), tol.boxes[b][k], std::array{"x1", "y1", "x2", "y2"}[k]);
    } else {
      c.differences.push_back(fmt::format("detection {} ({}) is not among LibTorch's", a, describe(ours, a)));
    }
    c.pairs.push_back(b);
  }
  for (std::size_t b = 0; b < theirs.scores.size(); ++b)
    if (!taken[b]) c.differences.push_back(fmt::format("LibTorch's detection {} ({}) is missing", b, describe(theirs, b)));
  return c;
}

// The detections in `d` equal LibTorch's (compare), highest score first as torchvision returns
// them. Returns LibTorch's index for each.
std::vector<std::size_t> check_detections(const ValueDict& d, const nlohmann::json& m) {
  const Detections ours = detections(d);
  REQUIRE(ours.labels.size() == ours.scores.size());
  CHECK(std::is_sorted(ours.scores.rbegin(), ours.scores.rend()));
  const Comparison c = compare(ours, expected_detections(m), tolerances(m));
  CHECK_MESSAGE(c.differences.empty(), fmt::format("{}", fmt::join(c.differences, "\n")));
  MESSAGE(fmt::format("the detections differ from LibTorch's by {:.2f} of their tolerances at most ({})", c.worst, c.where));
  return c.pairs;
}

// Each mask (probabilities, pasted into the image along its box) equals its pair's in LibTorch's
// within that one's tolerance, pixel by pixel; a mask whose paste is borderline may lie a pixel
// off, so each of its pixels need only be within the tolerance of the values LibTorch's mask
// takes within a pixel of it.
void check_masks(const Tensor& masks, const std::string& name, const nlohmann::json& m, const std::vector<std::size_t>& pairs) {
  const Tolerances tol = tolerances(m);
  const IntList shape = m["masks"].get<IntList>();
  REQUIRE(masks.shape() == Shape(shape));
  REQUIRE(tol.masks.size() == m["scores"].size());
  REQUIRE(shape.size() == 4);
  const std::vector<float> expected = read_floats(models / fmt::format("{}.masks.bin", name), shape).to_vector<float>();
  const std::vector<float> ours = masks.to_vector<float>();
  const auto height = static_cast<std::int64_t>(shape[2]), width = static_cast<std::int64_t>(shape[3]);
  const std::size_t per_mask = static_cast<std::size_t>(height * width);
  for (std::size_t a = 0; a < pairs.size(); ++a) {
    const std::size_t b = pairs[a];
    if (b >= tol.masks.size()) continue;  // no pair: reported by check_detections
    const bool borderline = std::ranges::find(tol.borderline_masks, b) != tol.borderline_masks.end();
    const float* x = &ours[a * per_mask];
    const float* e = &expected[b * per_mask];
    double worst = 0;  // beyond the values allowed
    for (std::int64_t i = 0; i < height; ++i)
      for (std::int64_t j = 0; j < width; ++j) {
        float low = e[i * width + j], high = low;
        for (std::int64_t di = -1; borderline && di <= 1; ++di)
          for (std::int64_t dj = -1; dj <= 1; ++dj)
            if (i + di >= 0 && i + di < height && j + dj >= 0 && j + dj < width) {
              low = std::min(low, e[(i + di) * width + j + dj]);
              high = std::max(high, e[(i + di) * width + j + dj]);
            }
        const float v = x[i * width + j];
        worst = std::max({worst, static_cast<double>(low - v), static_cast<double>(v - high)});
      }
    CHECK_MESSAGE(worst <= tol.masks[b], fmt::format("mask {}{}: a pixel {} beyond LibTorch's, more than {}", a,
                                                     borderline ? " (borderline paste)" : "", worst, tol.masks[b]));
  }
}

}  // namespace

TEST_CASE("torchvision's detection models find the objects LibTorch finds, eagerly") {
  for (const std::string& name : detectors) {
    CAPTURE(name);
    const nlohmann::json m = meta(name);
    std::shared_ptr<Module> model = torchscript::load(models / fmt::format("{}.script.pt", name));
    CHECK(model->num_parameters() == m["parameters"].get<std::int64_t>());
    const Tensor image = read_floats(models / fmt::format("{}.input.bin", name), m["input"].get<IntList>());
    REQUIRE(m["scores"].size() >= 10);  // the image was chosen so that there are detections

    const Value out = model->call({Value(ValueList{Value(image)})});
    const ValueDict& d = first_image_detections(out);
    const std::vector<std::size_t> pairs = check_detections(d, m);
    if (!m["masks"].is_null()) check_masks(entry(d, "masks"), name, m, pairs);
  }
}

TEST_CASE("the comparison of detections holds within the tolerances and finds a wrong box, label or score, "
          "a missing detection and an extra one") {
  const nlohmann::json m = meta("fasterrcnn_mobilenet_v3_large_320_fpn");
  const Detections theirs = expected_detections(m);
  const Tolerances tol = tolerances(m);
  REQUIRE(theirs.scores.size() >= 6);

  // Every score and every corner moved by half its tolerance: the same detections.
  Detections near = theirs;
  for (std::size_t i = 0; i < near.scores.size(); ++i) {
    near.scores[i] *= static_cast<float>(1 + tol.scores[i] / 2);
    for (std::size_t k = 0; k < 4; ++k) near.boxes[i][k] += static_cast<float>(tol.boxes[i][k] / 2);
  }
  CHECK(compare(near, theirs, tol).differences.empty());

  // Each change below the tolerances is found, named on both sides when a detection is changed.
  const auto differences = [&](const Detections& ours) { return compare(ours, theirs, tol).differences; };
  const auto named = [](const std::vector<std::string>& found, const std::vector<std::string>& expected) {
    CAPTURE(fmt::format("{}", fmt::join(found, "\n")));
    REQUIRE(found.size() == expected.size());
    for (std::size_t i = 0; i < found.size(); ++i) CHECK(found[i].starts_with(expected[i]));
  };
  Detections ours = theirs;
  SUBCASE("a corner moved by ten tolerances") {
    ours.boxes[3][2] += static_cast<float>(10 * tol.boxes[3][2]);
    named(differences(ours), {"detection 3 (", "LibTorch's detection 3 ("});
  }
  SUBCASE("another label") {
    ours.labels[1] = ours.labels[1] % 10 + 1;
    named(differences(ours), {"detection 1 (", "LibTorch's detection 1 ("});
  }
  SUBCASE("a score off by ten tolerances") {
    ours.scores[5] *= static_cast<float>(1 - 10 * tol.scores[5]);
    named(differences(ours), {"detection 5 (", "LibTorch's detection 5 ("});
  }
  SUBCASE("the last detection missing") {
    ours.scores.pop_back(), ours.labels.pop_back(), ours.boxes.pop_back();
    named(differences(ours), {fmt::format("LibTorch's detection {} (", theirs.scores.size() - 1)});
  }
  SUBCASE("an extra detection") {
    ours.scores.push_back(ours.scores.back() / 2), ours.labels.push_back(ours.labels.back());
    ours.boxes.push_back({1, 2, 30, 40});
    named(differences(ours), {fmt::format("detection {} (", theirs.scores.size())});
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
