// Which queue a batch job goes to, and whether it fits that queue's limits: the rules are the site
// profile's data (`queues`, `default_queue`; Polaris' are ALCF's published node and walltime
// limits), so a job that the scheduler would reject ("Job rejected by all possible destinations")
// is refused at plan time with the field to change. Pure.
#pragma once

#include <string>
#include <vector>

#include "plan/errors.hpp"
#include "plan/job_spec.hpp"
#include "plan/site_profile.hpp"

namespace dtrain::plan {

// The spec's queue, or the first of the site's default queues that fits the job ("" when the site
// has none). Adds an issue naming `nodes` or `walltime` when the spec's queue has rows the job
// breaks, or `queue` when no default queue fits.
std::string choose_queue(const JobSpec& spec, const std::string& source, const SiteProfile& site,
                         std::vector<SpecIssue>& issues);

// "prod (routed to small): 10-24 nodes, 00:05:00 to 03:00:00": one row, as messages show it.
std::string describe_queue_rule(const QueueRule& rule);

}  // namespace dtrain::plan
