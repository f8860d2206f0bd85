// The fast reader of tokenizer.json: simdjson's DOM (parsing a 9 MB file takes ~10 ms where
// nlohmann's DOM takes ~130 ms with its destruction), converted to nlohmann for the small parts
// and handed to the model as views for model.vocab and model.merges, the bulk of the file.
#include <simdjson.h>

#include <cstring>

#include "tokenizer/hf_impl.h"

namespace embedscope::hf {

namespace {

namespace sj = simdjson;

// nlohmann's DOM of one simdjson value, with nlohmann's number types: a non-negative integer is
// unsigned, a negative one signed, anything with a fraction or exponent a double.
json to_json(sj::dom::element e) {
  switch (e.type()) {
    case sj::dom::element_type::OBJECT: {
      json o = json::object();
      sj::dom::object obj;
      if (e.get(obj) != sj::SUCCESS) break;  // cannot happen: the type is known
      // A repeated key keeps its last value, as nlohmann's parser does.
      for (sj::dom::key_value_pair kv : obj) o[std::string(kv.key)] = to_json(kv.value);
      return o;
    }
    case sj::dom::element_type::ARRAY: {
      json a = json::array();
      sj::dom::array arr;
      if (e.get(arr) != sj::SUCCESS) break;
      for (sj::dom::element v : arr) a.push_back(to_json(v));
      return a;
    }
    case sj::dom::element_type::STRING:
      return json(std::string(e.get_string().value_unsafe()));
    case sj::dom::element_type::INT64: {
      int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? json(uint64_t(v)) : json(v);
    }
    case sj::dom::element_type::UINT64:
      return json(e.get_uint64().value_unsafe());
    case sj::dom::element_type::DOUBLE:
      return json(e.get_double().value_unsafe());
    case sj::dom::element_type::BOOL:
      return json(e.get_bool().value_unsafe());
    case sj::dom::element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json(nullptr);
}

// model.vocab when every id is an integer that fits int64.
bool take_vocab(sj::dom::element e, ModelLists* lists) {
  sj::dom::object o;
  if (e.get(o) != sj::SUCCESS) return false;
  lists->vocab.reserve(o.size());
  for (sj::dom::key_value_pair kv : o) {
    if (kv.value.type() != sj::dom::element_type::INT64) return false;
    lists->vocab.emplace_back(kv.key, kv.value.get_int64().value_unsafe());
    lists->vocab_bytes += kv.key.size();
  }
  return true;
}

// model.merges when every entry is a string or a pair of strings.
bool take_merges(sj::dom::element e, ModelLists* lists) {
  sj::dom::array a;
  if (e.get(a) != sj::SUCCESS) return false;
  lists->merges.reserve(a.size());
  for (sj::dom::element m : a) {
    std::string_view s;
    sj::dom::array pair;
    if (m.get(s) == sj::SUCCESS) {
      lists->merges.push_back({s, {}, true});
    } else if (m.get(pair) == sj::SUCCESS && pair.size() == 2) {
      std::string_view x, y;
      if (pair.at(0).get(x) != sj::SUCCESS || pair.at(1).get(y) != sj::SUCCESS) return false;
      lists->merges.push_back({x, y, false});
    } else {
      return false;
    }
  }
  return true;
}

// Where nlohmann may read a valid document differently from simdjson: a \uD800-\uDFFF escape
// (nlohmann rejects a lone surrogate) and "-0" (nlohmann keeps it a signed integer). A false
// alarm (inside a string) only costs the slow path.
bool needs_reference_parser(std::string_view t) {
  for (size_t i = 0; (i = t.find("\\u", i)) != std::string_view::npos; i += 2)
    if (i + 3 < t.size() && (t[i + 2] == 'd' || t[i + 2] == 'D') &&
        std::strchr("89abcdefABCDEF", t[i + 3]) != nullptr && t[i + 3] != '\0')
      return true;
  for (size_t i = 0; (i = t.find("-0", i)) != std::string_view::npos; i += 2) {
    char next = i + 2 < t.size() ? t[i + 2] : ' ';
    if (!(next == '.' || next == 'e' || next == 'E' || (next >= '0' && next <= '9'))) return true;
  }
  return false;
}

}  // namespace

bool parse_fast(std::string_view text, json* root, ModelLists* lists) {
  if (needs_reference_parser(text)) return false;
  auto parser = std::make_shared<sj::dom::parser>();
  sj::dom::element doc;
  // parse() copies the text into a padded buffer (simdjson reads up to 64 bytes past the end).
  // An empty view may carry a null pointer, which simdjson would memcpy from (UB): empty text
  // is not JSON anyway, and the DOM path reports it.
  if (text.empty()) return false;
  if (parser->parse(text.data(), text.size()).get(doc) != sj::SUCCESS) return false;
  sj::dom::object top;
  if (doc.get(top) != sj::SUCCESS) {
    *root = to_json(doc);
    return true;
  }
  *root = json::object();
  for (sj::dom::key_value_pair kv : top) {
    // A repeated "model" key: the last wins, as in nlohmann.
    if (kv.key == "model") *lists = ModelLists{};
    sj::dom::object model;
    if (kv.key != "model" || kv.value.get(model) != sj::SUCCESS) {
      (*root)[std::string(kv.key)] = to_json(kv.value);
      continue;
    }
    json m = json::object();
    for (sj::dom::key_value_pair f : model) {
      if (f.key == "vocab") {
        lists->vocab.clear();
        lists->vocab_bytes = 0;
        lists->has_vocab = take_vocab(f.value, lists);
        m["vocab"] = lists->has_vocab ? json::object() : to_json(f.value);
      } else if (f.key == "merges") {
        lists->merges.clear();
        lists->has_merges = take_merges(f.value, lists);
        m["merges"] = lists->has_merges ? json::array() : to_json(f.value);
      } else {
        m[std::string(f.key)] = to_json(f.value);
      }
    }
    (*root)["model"] = std::move(m);
  }
  lists->keep = parser;
  return true;
}

}  // namespace embedscope::hf
