// Progress reporting for long work: a callback receiving done/total with rate and ETA.
//
// The library calls report() at most every `interval` seconds; apps decide how to show it (a
// single updating line on a terminal, JSON lines when stdout is not a terminal, or nothing).
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace embedscope {

struct ProgressInfo {
  std::string what;  // "training", "index build"
  double done = 0;   // units done
  double total = 0;  // units total (0 if unknown)
  std::string unit;  // "words", "rows"
  double rate = 0;   // units per second since start
  double eta_seconds = 0;
  std::string extra;  // "loss 2.31 lr 0.0231"
};
using ProgressFn = std::function<void(const ProgressInfo&)>;

// Formats "training 45.2% 1.23M/2.7M words 512k words/s ETA 0:03 loss 2.31".
std::string format_progress(const ProgressInfo& p);

// The command-line progress printer: on a terminal (stderr), one line redrawn in place with
// format_progress(); otherwise one JSON line per report for scripts: {"event": "progress",
// stage, done, total, unit, rate, extra, eta_seconds}. Writes to stderr.
ProgressFn stderr_progress();
// After the last report: on a terminal, ends the redrawn line (a newline), or with `clear`
// erases it; nothing otherwise.
void end_stderr_progress(bool clear = false);

// Milliseconds on the monotonic clock, for the durations that commands report.
double now_ms();

}  // namespace embedscope
