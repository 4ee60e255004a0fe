#include "plan/yaml_expansion.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace dtrain::plan {
namespace {

// Counts nodes as the tree would hold them expanded: an alias adds its anchor's whole size.
class ExpansionCounter final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2 && !problem_) {
      problem_ = YamlShapeProblem{mark.line + 1,
                                  "expected one YAML document, got a second one (a \"---\" line "
                                  "starts it): put everything in one document"};
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // yaml-cpp registers an anchor before the node it marks is read, so `&a [x, *a]` refers to
    // itself: the tree it builds is a cycle, and every walk of it recursed until the stack ran out.
    const bool inside_own_anchor = std::any_of(open_.begin(), open_.end(), [&](const Open& o) {
      return o.anchor != YAML::NullAnchor && o.anchor == anchor;
    });
    if (inside_own_anchor && !problem_) {
      problem_ = YamlShapeProblem{mark.line + 1,
                                  "expected each alias (*name) after the node its anchor (&name) "
                                  "marks, got one inside that node: the value would contain "
                                  "itself without end"};
    }
    add(anchor < sizes_.size() ? sizes_[anchor] : 1, mark);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    leaf(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({1, anchor});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back({1, anchor});
  }
  void OnMapEnd() override { close(); }

  const std::optional<YamlShapeProblem>& problem() const { return problem_; }

 private:
  struct Open {
    std::uint64_t size;
    YAML::anchor_t anchor;
  };

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    remember(anchor, 1);
    add(1, mark);
  }
  void close() {
    const Open o = open_.back();
    open_.pop_back();
    remember(o.anchor, o.size);
    add(o.size, last_);
  }
  void remember(YAML::anchor_t anchor, std::uint64_t size) {
    if (anchor == YAML::NullAnchor) return;
    if (sizes_.size() <= anchor) sizes_.resize(anchor + 1, 1);
    sizes_[anchor] = size;
  }
  // Saturating: sizes stop just past the limit, so no sum overflows.
  void add(std::uint64_t n, const YAML::Mark& mark) {
    last_ = mark;
    std::uint64_t& into = open_.empty() ? total_ : open_.back().size;
    into = std::min(into + n, kMaxExpandedNodes + 1);
    if (into > kMaxExpandedNodes && !problem_) {
      problem_ = YamlShapeProblem{
          mark.line + 1, "expected at most " + std::to_string(kMaxExpandedNodes) +
                             " nodes with aliases (*name) expanded, got more: anchors (&name) "
                             "used inside each other multiply the text"};
    }
  }

  std::vector<Open> open_;
  std::vector<std::uint64_t> sizes_;  // by anchor id: the anchored node's expanded size
  std::uint64_t total_ = 0;
  int documents_ = 0;
  YAML::Mark last_;
  std::optional<YamlShapeProblem> problem_;
};

}  // namespace

std::optional<YamlShapeProblem> check_yaml_shape(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  ExpansionCounter counter;
  try {
    while (!counter.problem() && parser.HandleNextDocument(counter)) {
    }
  } catch (const YAML::Exception&) {
    // Bad YAML: the loader says where and why.
  }
  return counter.problem();
}

}  // namespace dtrain::plan
