// The site profile's queue limits (Polaris' are ALCF's): the default queue that fits the job, and
// each broken limit refused with the field to change.
#include "plan/queue_rules.hpp"

#include <gtest/gtest.h>

#include "support.hpp"

namespace dtrain::plan {
namespace {

using testing::builtin_profile;
using testing::plan_spec;

std::string polaris_spec(const std::string& fields) {
  return "name: x\nsite: polaris\naccount: a\ncommand: [a]\n" + fields;
}

// The queue the plan's script asks for, or the plan's error.
std::string polaris_queue(const std::string& fields) {
  try {
    const std::string script =
        plan_spec(parse_job_spec(polaris_spec(fields), "job.yaml"), builtin_profile("polaris"))
            .script;
    const auto at = script.find("#PBS -q ");
    return at == std::string::npos ? "(no queue)"
                                   : script.substr(at + 8, script.find('\n', at) - at - 8);
  } catch (const SpecError& e) {
    return e.what();
  }
}

TEST(QueueRules, TheDefaultQueueIsTheFirstThatFits) {
  EXPECT_EQ(polaris_queue("nodes: 2\nwalltime: \"00:30:00\"\n"), "debug");
  // The 4-node job went to debug, whose limit is 2 nodes.
  EXPECT_EQ(polaris_queue("nodes: 4\nwalltime: \"00:30:00\"\n"), "debug-scaling");
  EXPECT_EQ(polaris_queue("nodes: 10\nwalltime: \"01:00:00\"\n"), "debug-scaling");
  EXPECT_EQ(polaris_queue("nodes: 10\nwalltime: \"02:00:00\"\n"), "prod");
  EXPECT_EQ(polaris_queue("nodes: 200\nwalltime: \"20:00:00\"\n"), "prod");
}

TEST(QueueRules, NoDefaultQueueFitsNamesTheQueueField) {
  EXPECT_EQ(polaris_queue("nodes: 4\nwalltime: \"02:00:00\"\n"),
            "job.yaml: queue: site polaris has no default queue for 4 nodes and a walltime of "
            "02:00:00; expected a queue in the job spec, or nodes and walltime that fit one of: "
            "debug: 1-2 nodes, 00:05:00 to 01:00:00; debug-scaling: 1-10 nodes, 00:05:00 to "
            "01:00:00; prod (routed to small): 10-24 nodes, 00:05:00 to 03:00:00; prod (routed to "
            "medium): 25-99 nodes, 00:05:00 to 06:00:00; prod (routed to large): 100-496 nodes, "
            "00:05:00 to 24:00:00");
}

TEST(QueueRules, TooFewOrTooManyNodesForTheQueueNamesNodes) {
  EXPECT_EQ(polaris_queue("queue: prod\nnodes: 4\nwalltime: \"01:00:00\"\n"),
            "job.yaml: nodes: expected 10-496 nodes in queue prod on site polaris, got 4");
  EXPECT_EQ(polaris_queue("queue: debug\nnodes: 3\nwalltime: \"01:00:00\"\n"),
            "job.yaml: nodes: expected 1-2 nodes in queue debug on site polaris, got 3");
}

TEST(QueueRules, AWalltimeOutsideTheQueuesNamesWalltime) {
  // prod routes 10-24 nodes to small, whose limit is 3 hours.
  EXPECT_EQ(polaris_queue("queue: prod\nnodes: 12\nwalltime: \"48:00:00\"\n"),
            "job.yaml: walltime: expected at most 03:00:00 for 12 nodes in queue prod on site "
            "polaris (routed to small), got 48:00:00");
  EXPECT_EQ(polaris_queue("queue: prod\nnodes: 100\nwalltime: \"24:00:00\"\n"), "prod");
  EXPECT_EQ(polaris_queue("queue: debug\nnodes: 1\nwalltime: \"00:02:00\"\n"),
            "job.yaml: walltime: expected at least 00:05:00 for 1 nodes in queue debug on site "
            "polaris, got 00:02:00");
}

// A queue the profile does not list (a reservation, a new queue) is the site's business.
TEST(QueueRules, AQueueWithoutRulesIsTakenAsGiven) {
  EXPECT_EQ(polaris_queue("queue: R1234\nnodes: 400\nwalltime: \"100:00:00\"\n"), "R1234");
}

TEST(QueueRules, ProfileRowsAreChecked) {
  const std::string head = "name: x\nscheduler: pbspro\nlauncher: mpiexec\n";
  const auto errors = [&](const std::string& text) {
    try {
      parse_site_profile(head + text, "site.yaml");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(errors("queues:\n  - {min_nodes: 1}\n"),
            "site.yaml:5: queues[0].queue: required field is missing");
  EXPECT_EQ(errors("queues:\n  - {queue: q, min_nodes: 4, max_nodes: 2}\n"),
            "site.yaml:5: queues[0].max_nodes: expected at least min_nodes (4), got 2");
  EXPECT_EQ(errors("queues:\n  - {queue: q, max_walltime: soon}\n"),
            "site.yaml:5: queues[0].max_walltime: expected a duration such as \"01:30:00\" "
            "(HH:MM:SS), \"1-00:00:00\" (D-HH:MM:SS) or 90 (minutes), up to 366 days, got "
            "\"soon\"");
  EXPECT_EQ(errors("default_queue: {a: 1}\n"),
            "site.yaml:4: default_queue: expected a queue name or a list of them, got a mapping");
  const SiteProfile p = parse_site_profile(
      head + "default_queue: [a, b]\nqueues:\n  - {queue: a, max_nodes: 2}\n", "site.yaml");
  EXPECT_EQ(p.default_queues, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(p.queues.size(), 1u);
  EXPECT_EQ(describe_queue_rule(p.queues[0]), "a: 1-2 nodes");
}

}  // namespace
}  // namespace dtrain::plan
