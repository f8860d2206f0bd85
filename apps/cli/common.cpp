#include "common.h"

#include <sys/stat.h>

#include <cstdio>
#include <iostream>

#include "embedscope/core/thread_pool.h"

namespace embedscope::cli {

namespace {
std::vector<std::function<void()>>& text_options() {
  static std::vector<std::function<void()>> v;
  return v;
}
}  // namespace

CLI::Option* Bind::text(std::string_view names, std::string_view help,
                        std::function<void(const std::string&)> set) {
  auto s = std::make_shared<std::string>();
  CLI::Option* o = app.add_option(std::string(names), *s, std::string(help));
  text_options().push_back([o, s, set = std::move(set)] {
    if (o->count()) set(*s);
  });
  return o;
}

CLI::Option* Bind::checked(CLI::Option* o, const api::OptionSpec& s, bool integral) {
  if (!s.choices.empty()) {
    std::vector<std::string> c;
    for (size_t b = 0, e; b <= s.choices.size(); b = e + 1)
      c.emplace_back(
          s.choices.substr(b, (e = std::min(s.choices.find('|', b), s.choices.size())) - b));
    o->check(CLI::IsMember(c));
  }
  if (s.min < s.max)
    integral ? o->check(CLI::Range(int64_t(s.min), int64_t(s.max)))
             : o->check(CLI::Range(s.min, s.max));
  if (s.positive) o->check(CLI::PositiveNumber);
  if (s.show_default) o->capture_default_str();
  if (s.required) o->required();
  return o;
}

CLI::App* add_command(CLI::App& parent, const std::string& name) {
  std::string full = parent.get_parent() ? parent.get_name() + " " + name : name;
  const api::CommandDoc* doc = api::command_doc(full);
  if (doc == nullptr) throw std::logic_error("no api::kCommandDocs entry for " + full);
  CLI::App* sub = parent.add_subcommand(name, std::string(doc->summary));
  sub->footer(std::string(doc->footer));
  return sub;
}

void apply_text_options() {
  for (auto& f : text_options()) f();
}

CLI::Option* add_model_flag(CLI::App& app, std::string& ref) {
  return app.add_option(
      "--model,-m", ref,
      "model: file, Hugging Face folder or hub id (default: the embedded default model)");
}

CLI::Option* add_threads_flag(CLI::App& app, size_t& n) {
  return app.add_option("--threads,-t", n, "threads (default: all cores)");
}

CLI::Option* add_json_flag(CLI::App& app, bool& on, const std::string& help) {
  return app.add_flag("--json", on, help.empty() ? "machine-readable output" : help);
}

CLI::Option* add_tokenizer_flag(CLI::App& app, std::string& ref) {
  return app.add_option(
      "--model", ref,
      "tokenizer: model folder, tokenizer.json or .gguf (default: GPT-2 from setup)");
}

void print_json(const json& j, bool pretty) {
  std::cout << j.dump(pretty ? 2 : -1, ' ', false, json::error_handler_t::replace) << "\n";
}

void print_text(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

ModelHandlePtr open_handle(const std::string& ref, const std::string& tokenizer, size_t threads) {
  if (threads) set_process_threads(threads);
  // Start the workers now: a new thread may wait a millisecond or more for its CPU (a halted
  // virtual CPU wakes slowly), and that wait then overlaps opening the model, not the scan.
  process_pool();
  HandleOptions options;
  options.tokenizer = tokenizer;
  options.progress = stderr_progress();
  ModelHandlePtr h = ModelHandle::open(ref, options);
  end_stderr_progress(true);
  // Kept until exit: freeing a model's lazily built copies (norms, normalised rows, an index)
  // then happens after a detached child has handed its answer to the caller (core/detach.h).
  static std::vector<ModelHandlePtr> kept;
  kept.push_back(h);
  return h;
}

CLI::Option* add_search_flags(CLI::App& app, SearchFlags& f, const std::string& args_help) {
  CLI::Option* o = app.add_option("ARGS", f.args, args_help);
  add_model_flag(app, f.model);
  add_threads_flag(app, f.threads);
  add_json_flag(app, f.json);
  return o;
}

std::string take_model_ref(SearchFlags& f, int n_words) {
  if (!f.model.empty() || f.args.empty()) return f.model;
  // An existing path is always the model (so a missing word gives an arity error, not a
  // silent switch to the default model); otherwise count the words.
  struct stat st;
  if (::stat(f.args[0].c_str(), &st) != 0 && (n_words < 0 || f.args.size() <= size_t(n_words)))
    return "";
  std::string ref = f.args[0];
  f.args.erase(f.args.begin());
  return ref;
}

ModelHandlePtr open_search(SearchFlags& f, int n_words, const std::string& what,
                           const std::string& need) {
  std::string ref = take_model_ref(f, n_words);
  if (!what.empty() && f.args.size() != size_t(n_words))
    throw Error(ErrorCode::kInvalidArgument,
                what + " needs " + need + ", got " + std::to_string(f.args.size()));
  return open_handle(ref, "auto", f.threads);
}

void require_cosine(const std::string& metric, const std::string& what) {
  if (parse_metric(metric) != Metric::kCosine)
    throw Error(ErrorCode::kInvalidArgument, what + " by cosine; drop --metric " + metric);
}

}  // namespace embedscope::cli
