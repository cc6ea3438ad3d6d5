#pragma once
// Everything k3plan writes goes through here: files (-o, --svg, launch -o DIR), standard output and
// the one error line on standard error.
//
// Files: the temporary is created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, a unique name in the
// target's directory, so a planted link is never followed), written, flushed, fsync'ed and checked,
// then renamed over the target (rename(2) replaces a link at the target itself, never its referent).
// A multi-file output stages every temporary complete before the first rename; any failure removes
// every temporary and throws InputError naming the file (exit 2, nothing left behind).
#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace k3plan {

struct OutputFile {
  std::string path;
  std::string content;
  bool executable = false;  // mode 0755 instead of 0644 (launch scripts)
};

void write_file_atomic(const std::string& path, std::string_view content, bool executable = false);
void write_files_atomic(const std::vector<OutputFile>& files);

// Writes to standard output; a write error (disk full, closed pipe) throws InputError.
void write_stdout(std::string_view text);
// Flushes stdout and std::cout; on a write error prints one error line and returns 2, else `code`.
int finish_stdout(int code) noexcept;
// `k3plan: error: <msg>` with control characters escaped; never throws, even when stderr fails.
void print_error_line(std::string_view msg) noexcept;

// Control characters (ESC, CR, ...) as \xNN, invalid UTF-8 bytes as \xNN: what is echoed from input
// can neither drive a terminal nor make JSON/YAML output invalid.
std::string escape_for_terminal(std::string_view s);
bool valid_utf8(std::string_view s, std::size_t* bad_offset = nullptr);
// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates, <= U+10FFFF),
// 0 if invalid; `code_point` gets its value. The one decoder: every reader and emitter uses it.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t* code_point = nullptr);
// The escaping itself. keep_layout: newline and tab pass (multi-line notes, scripts); keep_controls:
// only invalid UTF-8 is escaped (JSON escapes control characters itself).
std::string sanitize_text(std::string_view s, bool keep_layout, bool keep_controls);
// Every string and key of a JSON value with invalid UTF-8 escaped (the writer then never throws).
void sanitize_json(nlohmann::json& j);
// make_printable(Report&), the same over a whole report, is in render/report.hpp.

}  // namespace k3plan
