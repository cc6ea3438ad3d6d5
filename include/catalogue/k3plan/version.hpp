#pragma once
// What `k3plan --version` prints: the release, the git commit the binary was built from and the
// date of the catalogue it carries.
#include <k3plan/catalogue.hpp>
#include <string>

namespace k3plan {

// "k3plan 0.1.0\ncommit 0123abcd4567 (modified)\ncatalogue 2026-05 (...)"; cheap: reads no YAML and
// loads no catalogue (the date is computed at build time, see catalogue_date).
std::string version_text();

// The newest date the catalogue states for its own figures: each model's `date`, each GPU's price
// date, each rental and API price date, and each engine version window's `date` (YYYY-MM or
// YYYY-MM-DD; the later of two equal prefixes wins). "" when none is given.
std::string catalogue_date(const Catalogue& c);

// Recorded by the build (cmake/build_info.cmake): `git describe`-style commit of the source tree,
// "unknown" outside a git checkout.
const char* build_commit();
const char* build_version();

}  // namespace k3plan
