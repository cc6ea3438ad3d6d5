#pragma once
// Limits applied to every user file before it is parsed (src/catalogue/input_limits.cpp): `check`
// and `launch` read deployment files, manifests and launch scripts through these, so the same file
// meets the same limits whichever command reads it. Violations are InputError (exit 2, one line).
#include <cstddef>
#include <string>

namespace k3plan {

inline constexpr std::size_t kMaxDeploymentBytes = 16u * 1024u * 1024u;  // 16 MiB: deployment files and manifests
inline constexpr std::size_t kMaxScriptBytes = 1u << 20;                 // 1 MiB: a launch script given to --command
inline constexpr int kMaxYamlDepth = 256;

// Rejects (InputError, one line) text that is not worth handing to a YAML parser: NUL bytes or
// other binary data, invalid UTF-8, more than `max_bytes`, or nesting (flow brackets, block
// indentation, compact "- - -" sequences) deeper than `max_depth`.
void check_yaml_limits(const std::string& text, const std::string& origin, std::size_t max_bytes = kMaxDeploymentBytes,
                       int max_depth = kMaxYamlDepth);

// Reads a regular file of at most `max_bytes` (checked before reading); `what` names the kind of
// file in the error ("deployment file", "manifest"). Missing, directory, special or binary: InputError.
std::string read_capped(const std::string& path, std::size_t max_bytes, const char* what);

// read_capped + check_yaml_limits: the one way a YAML input file is read.
std::string read_yaml_input(const std::string& path, const char* what, std::size_t max_bytes = kMaxDeploymentBytes);

}  // namespace k3plan
