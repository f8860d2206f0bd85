// Answer first, clean up after: a process whose exit does not wait for the kernel to unmap.
//
// A one-shot query maps its table and touches every page: on exit the kernel then tears down
// one page-table entry per 4 KiB, 20-45 ms for a 2 GB table on our 2-core machines, after the
// answer is printed but before the shell (or a script's wait) sees the process end. mold, the
// linker, meets the same cost the same way: the work runs in a forked child, and the parent that
// the caller waits for exits as soon as the child reports its status; the child's own exit (the
// teardown) then overlaps whatever the caller does next.
//
// run_detached(fn):
//   - forks; the child runs fn(), flushes stdout and stderr, points both at /dev/null (so a
//     reader of a pipe sees end of file now), and writes fn's exit status to the parent, which
//     exits with it at once;
//   - the child dies with the parent (PR_SET_PDEATHSIG): a signal that ends the parent (Ctrl-C,
//     `timeout`, kill) stops the work too;
//   - a child that dies before reporting (a signal, SIGPIPE from a closed pipe) makes the parent
//     die of the same signal, or exit with the child's status;
//   - in the child, a released mapping stays until exit (in_detached_child());
//   - fn runs in this process instead, with nothing forked, when `allowed` is false, when fork
//     or pipe fails, and in sanitizer builds (their exit-time reports need the child's stderr).
// Call it before any thread starts: fork copies only the calling thread.
#pragma once

#include <functional>

namespace embedscope {

int run_detached(const std::function<int()>& fn, bool allowed = true);

// True in run_detached's child. Its mappings are not unmapped one by one (MappedFile skips
// munmap): a command's output is usually still buffered when its model is released, and the
// process's exit, after the report, unmaps them all.
bool in_detached_child();

}  // namespace embedscope
