// Restricted unpickler (see pickle.h). Opcode semantics follow CPython Lib/pickle.py
// (_Unpickler.load_*) and Lib/pickletools.py; torch's side is torch/serialization.py
// (_save: persistent_id returns ('storage', storage_type, key, location, numel)) and
// torch/_utils.py (_rebuild_tensor_v2).
#include "embedscope/formats/pickle.h"

#include <cstring>
#include <map>

#include "embedscope/core/bytes.h"
#include "embedscope/core/error.h"

namespace embedscope {

std::pair<std::string, size_t> torch_storage_dtype(std::string_view c) {
  if (c == "FloatStorage") return {"F32", 4};
  if (c == "HalfStorage") return {"F16", 2};
  if (c == "BFloat16Storage") return {"BF16", 2};
  if (c == "DoubleStorage") return {"F64", 8};
  if (c == "LongStorage") return {"I64", 8};
  if (c == "IntStorage") return {"I32", 4};
  if (c == "ShortStorage") return {"I16", 2};
  if (c == "CharStorage") return {"I8", 1};
  if (c == "ByteStorage") return {"U8", 1};
  if (c == "BoolStorage") return {"BOOL", 1};
  return {"", 0};
}

namespace {

class Unpickler {
 public:
  Unpickler(std::span<const std::byte> b, const std::string& name) : b_(b), name_(name) {}
  PickleRef run();

 private:
  [[noreturn]] void fail(ErrorCode code, const std::string& what) const {
    throw Error(code,
                name_ + ": pickle " + what + " (at byte offset " + std::to_string(op_at_) + ")");
  }
  uint64_t need(uint64_t n, const char* what) {
    if (b_.size() - pos_ < n)
      fail(ErrorCode::kCorrupt, std::string("truncated ") + what + ": need " + std::to_string(n) +
                                    " bytes, " + std::to_string(b_.size() - pos_) + " remain");
    uint64_t at = pos_;
    pos_ += n;
    return at;
  }
  template <typename T>
  T arg(const char* what) {
    return load_le<T>(b_.data() + need(sizeof(T), what));
  }
  std::string text(uint64_t n, const char* what) {
    uint64_t at = need(n, what);
    return std::string(reinterpret_cast<const char*>(b_.data() + at), n);
  }
  std::string line(const char* what) {
    uint64_t start = pos_;
    while (pos_ < b_.size() && b_[pos_] != std::byte{'\n'}) {
      if (pos_ - start > 256)
        fail(ErrorCode::kCorrupt, std::string(what) + " longer than 256 bytes");
      ++pos_;
    }
    if (pos_ >= b_.size()) fail(ErrorCode::kCorrupt, std::string("unterminated ") + what);
    std::string s(reinterpret_cast<const char*>(b_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }
  PickleRef make(PickleKind k) {
    auto o = std::make_shared<PickleObject>();
    o->kind = k;
    return o;
  }
  void push(PickleRef o) { stack_.push_back(std::move(o)); }
  PickleRef pop() {
    if (stack_.size() <= floor()) fail(ErrorCode::kCorrupt, "stack underflow");
    PickleRef o = std::move(stack_.back());
    stack_.pop_back();
    if (!o) fail(ErrorCode::kCorrupt, "MARK used as a value");
    return o;
  }
  PickleRef& top() {
    if (stack_.size() <= floor()) fail(ErrorCode::kCorrupt, "stack underflow");
    if (!stack_.back()) fail(ErrorCode::kCorrupt, "MARK used as a value");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // Items above the topmost MARK, which is removed.
  std::vector<PickleRef> pop_mark() {
    if (marks_.empty()) fail(ErrorCode::kCorrupt, "no MARK on the stack");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PickleRef> items(std::make_move_iterator(stack_.begin() + m),
                                 std::make_move_iterator(stack_.end()));
    stack_.resize(m - 1);  // also drops the MARK placeholder
    return items;
  }
  // Containers are filled only before they are put in another one, and never into themselves:
  // that rules out reference cycles (which would leak) without tracking ancestry.
  void adopt(PickleObject& parent, const PickleRef& child) {
    if (parent.adopted || child.get() == &parent)
      fail(ErrorCode::kCorrupt, "container modified after being nested (reference cycle)");
    child->adopted = true;
    if (child->depth + 1 > parent.depth) parent.depth = child->depth + 1;
    if (parent.depth > kMaxPickleDepth)
      fail(ErrorCode::kCorrupt, "nesting deeper than " + std::to_string(kMaxPickleDepth));
  }
  PickleRef tuple(std::vector<PickleRef> items) {
    PickleRef t = make(PickleKind::kTuple);
    for (auto& c : items) adopt(*t, c);
    t->items = std::move(items);
    return t;
  }
  void set_items(PickleObject& d, std::vector<PickleRef>& kv) {
    if (d.kind != PickleKind::kDict) fail(ErrorCode::kCorrupt, "SETITEM(S) on a non-dict");
    if (kv.size() % 2) fail(ErrorCode::kCorrupt, "SETITEMS with an odd number of items");
    for (size_t k = 0; k < kv.size(); k += 2) {
      adopt(d, kv[k]);
      adopt(d, kv[k + 1]);
      d.dict.emplace_back(kv[k], kv[k + 1]);
    }
  }
  PickleRef global(const std::string& module, const std::string& qual);
  PickleRef reduce(const PickleRef& callable, const PickleRef& args);
  PickleRef persistent(const PickleRef& pid);
  uint64_t as_uint(const PickleRef& o, const char* what) {
    if (o->kind != PickleKind::kInt || o->i < 0)
      fail(ErrorCode::kCorrupt, std::string(what) + " is not a non-negative integer");
    return uint64_t(o->i);
  }
  std::vector<uint64_t> uint_tuple(const PickleRef& o, const char* what) {
    if (o->kind != PickleKind::kTuple)
      fail(ErrorCode::kCorrupt, std::string(what) + " is not a tuple");
    std::vector<uint64_t> v;
    for (auto& x : o->items) v.push_back(as_uint(x, what));
    return v;
  }

  std::span<const std::byte> b_;
  const std::string& name_;
  uint64_t pos_ = 0;
  uint64_t op_at_ = 0;
  std::vector<PickleRef> stack_;  // nullptr entries are MARK placeholders
  std::vector<size_t> marks_;     // stack_ index just above each MARK
  std::map<uint64_t, PickleRef> memo_;
};

PickleRef Unpickler::global(const std::string& module, const std::string& qual) {
  std::string full = module + "." + qual;
  bool ok = full == "collections.OrderedDict" || full == "torch._utils._rebuild_tensor_v2" ||
            full == "torch._utils._rebuild_parameter" ||
            (module == "torch" && !torch_storage_dtype(qual).first.empty());
  if (!ok)
    fail(ErrorCode::kUnsupported,
         "global '" + full +
             "' is not allowed (a state dict of tensors needs only "
             "collections.OrderedDict, torch._utils._rebuild_tensor_v2 and torch.*Storage); "
             "refusing to load");
  PickleRef g = make(PickleKind::kGlobal);
  g->s = full;
  return g;
}

PickleRef Unpickler::persistent(const PickleRef& pid) {
  // ('storage', <torch.XStorage global>, key: str, location: str, numel: int)
  const auto& it = pid->items;
  if (pid->kind != PickleKind::kTuple || it.size() != 5 || it[0]->kind != PickleKind::kString ||
      it[0]->s != "storage" || it[1]->kind != PickleKind::kGlobal ||
      it[2]->kind != PickleKind::kString || it[3]->kind != PickleKind::kString)
    fail(ErrorCode::kCorrupt,
         "persistent id is not ('storage', torch.<Type>Storage, key, location, numel)");
  std::string cls = it[1]->s.substr(it[1]->s.rfind('.') + 1);
  auto [dtype, size] = torch_storage_dtype(cls);
  if (dtype.empty())
    fail(ErrorCode::kCorrupt, "persistent id names '" + it[1]->s + "', not a storage type");
  PickleRef s = make(PickleKind::kStorage);
  s->s = dtype;
  s->storage_key = it[2]->s;
  s->location = it[3]->s;
  s->storage_numel = as_uint(it[4], "storage numel");
  return s;
}

PickleRef Unpickler::reduce(const PickleRef& callable, const PickleRef& args) {
  if (callable->kind != PickleKind::kGlobal) fail(ErrorCode::kCorrupt, "REDUCE on a non-callable");
  if (args->kind != PickleKind::kTuple)
    fail(ErrorCode::kCorrupt, "REDUCE arguments are not a tuple");
  const auto& a = args->items;
  if (callable->s == "collections.OrderedDict") {
    if (!a.empty()) fail(ErrorCode::kCorrupt, "OrderedDict called with arguments");
    return make(PickleKind::kDict);
  }
  if (callable->s == "torch._utils._rebuild_tensor_v2") {
    // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
    if (a.size() != 6 && a.size() != 7)
      fail(ErrorCode::kCorrupt,
           "_rebuild_tensor_v2 takes 6 or 7 arguments, got " + std::to_string(a.size()));
    if (a[0]->kind != PickleKind::kStorage)
      fail(ErrorCode::kCorrupt, "_rebuild_tensor_v2 argument 0 is not a storage");
    PickleRef t = make(PickleKind::kTensor);
    t->storage = a[0];
    t->storage_offset = as_uint(a[1], "storage_offset");
    t->shape = uint_tuple(a[2], "size");
    t->stride = uint_tuple(a[3], "stride");
    if (t->shape.size() != t->stride.size())
      fail(ErrorCode::kCorrupt, "tensor size has " + std::to_string(t->shape.size()) +
                                    " dimensions but stride has " +
                                    std::to_string(t->stride.size()));
    return t;
  }
  if (callable->s == "torch._utils._rebuild_parameter") {
    if (a.size() != 3 || a[0]->kind != PickleKind::kTensor)
      fail(ErrorCode::kCorrupt, "_rebuild_parameter expects (tensor, requires_grad, hooks)");
    return a[0];
  }
  fail(ErrorCode::kUnsupported, "REDUCE of '" + callable->s + "' is not allowed");
}

PickleRef Unpickler::run() {
  while (true) {
    op_at_ = pos_;
    uint8_t op = std::to_integer<uint8_t>(b_[need(1, "opcode")]);
    switch (op) {
      case 0x80: {  // PROTO
        uint8_t v = arg<uint8_t>("PROTO");
        if (v > 5) fail(ErrorCode::kUnsupported, "protocol " + std::to_string(v) + " (max 5)");
        break;
      }
      case 0x95:
        arg<uint64_t>("FRAME");
        break;     // FRAME: a length hint only
      case '.': {  // STOP
        PickleRef r = pop();
        return r;
      }
      case '(':
        marks_.push_back(stack_.size() + 1);
        stack_.push_back(nullptr);
        break;  // MARK
      case '0':
        pop();
        break;  // POP
      case '1':
        pop_mark();
        break;  // POP_MARK
      case '2':
        push(top());
        break;     // DUP
      case 'c': {  // GLOBAL "module\nname\n"
        std::string m = line("GLOBAL module");
        std::string q = line("GLOBAL name");
        push(global(m, q));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        PickleRef q = pop(), m = pop();
        if (m->kind != PickleKind::kString || q->kind != PickleKind::kString)
          fail(ErrorCode::kCorrupt, "STACK_GLOBAL needs two strings");
        push(global(m->s, q->s));
        break;
      }
      case 'q':
        memo_[arg<uint8_t>("BINPUT")] = top();
        break;
      case 'r':
        memo_[arg<uint32_t>("LONG_BINPUT")] = top();
        break;
      case 0x94:
        memo_[memo_.size()] = top();
        break;  // MEMOIZE
      case 'h':
      case 'j': {  // BINGET / LONG_BINGET
        uint64_t k = op == 'h' ? arg<uint8_t>("BINGET") : arg<uint32_t>("LONG_BINGET");
        auto it = memo_.find(k);
        if (it == memo_.end())
          fail(ErrorCode::kCorrupt, "memo key " + std::to_string(k) + " not defined");
        push(it->second);
        break;
      }
      case ')':
        push(make(PickleKind::kTuple));
        break;  // EMPTY_TUPLE
      case 't':
        push(tuple(pop_mark()));
        break;      // TUPLE
      case 0x85: {  // TUPLE1
        PickleRef a = pop();
        push(tuple({a}));
        break;
      }
      case 0x86: {  // TUPLE2
        PickleRef b2 = pop(), a = pop();
        push(tuple({a, b2}));
        break;
      }
      case 0x87: {  // TUPLE3
        PickleRef c = pop(), b2 = pop(), a = pop();
        push(tuple({a, b2, c}));
        break;
      }
      case ']':
        push(make(PickleKind::kList));
        break;     // EMPTY_LIST
      case 'a': {  // APPEND
        PickleRef v = pop();
        PickleRef& l = top();
        if (l->kind != PickleKind::kList) fail(ErrorCode::kCorrupt, "APPEND to a non-list");
        adopt(*l, v);
        l->items.push_back(v);
        break;
      }
      case 'e': {  // APPENDS
        auto items = pop_mark();
        PickleRef& l = top();
        if (l->kind != PickleKind::kList) fail(ErrorCode::kCorrupt, "APPENDS to a non-list");
        for (auto& v : items) {
          adopt(*l, v);
          l->items.push_back(v);
        }
        break;
      }
      case '}':
        push(make(PickleKind::kDict));
        break;     // EMPTY_DICT
      case 's': {  // SETITEM
        PickleRef v = pop(), k = pop();
        std::vector<PickleRef> kv{k, v};
        set_items(*top(), kv);
        break;
      }
      case 'u': {  // SETITEMS
        auto kv = pop_mark();
        set_items(*top(), kv);
        break;
      }
      case 'b': {  // BUILD: state for an OrderedDict (its _metadata attribute) is ignored
        pop();     // the state
        if (top()->kind != PickleKind::kDict)
          fail(ErrorCode::kUnsupported, "BUILD on a non-dict object");
        break;
      }
      case 'R': {  // REDUCE
        PickleRef args = pop(), callable = pop();
        push(reduce(callable, args));
        break;
      }
      case 'Q':
        push(persistent(pop()));
        break;  // BINPERSID
      case 'N':
        push(make(PickleKind::kNone));
        break;
      case 0x88:
      case 0x89: {  // NEWTRUE / NEWFALSE
        PickleRef o = make(PickleKind::kBool);
        o->i = op == 0x88;
        push(o);
        break;
      }
      case 'J': {
        PickleRef o = make(PickleKind::kInt);
        o->i = arg<int32_t>("BININT");
        push(o);
        break;
      }
      case 'K': {
        PickleRef o = make(PickleKind::kInt);
        o->i = arg<uint8_t>("BININT1");
        push(o);
        break;
      }
      case 'M': {
        PickleRef o = make(PickleKind::kInt);
        o->i = arg<uint16_t>("BININT2");
        push(o);
        break;
      }
      case 0x8a: {  // LONG1: little-endian two's complement of n bytes
        uint8_t n = arg<uint8_t>("LONG1 length");
        if (n > 8)
          fail(ErrorCode::kUnsupported, "LONG1 of " + std::to_string(n) + " bytes (max 8)");
        uint64_t at = need(n, "LONG1");
        uint64_t v = 0;
        for (uint8_t k = 0; k < n; ++k)
          v |= uint64_t(std::to_integer<uint8_t>(b_[at + k])) << (8 * k);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);  // sign-extend
        PickleRef o = make(PickleKind::kInt);
        o->i = int64_t(v);
        push(o);
        break;
      }
      case 'G': {  // BINFLOAT: big-endian double
        uint64_t u = 0;
        uint64_t at = need(8, "BINFLOAT");
        for (int k = 0; k < 8; ++k) u = (u << 8) | std::to_integer<uint8_t>(b_[at + k]);
        PickleRef o = make(PickleKind::kFloat);
        std::memcpy(&o->f, &u, 8);
        push(o);
        break;
      }
      case 'X':
      case 0x8c:
      case 0x8d: {  // BINUNICODE / SHORT_BINUNICODE / BINUNICODE8
        uint64_t n = op == 'X'    ? arg<uint32_t>("BINUNICODE length")
                     : op == 0x8c ? arg<uint8_t>("SHORT_BINUNICODE length")
                                  : arg<uint64_t>("BINUNICODE8 length");
        PickleRef o = make(PickleKind::kString);
        o->s = text(n, "string");
        push(o);
        break;
      }
      default: {
        char b[8];
        std::snprintf(b, sizeof b, "0x%02x", op);
        fail(ErrorCode::kUnsupported,
             std::string("opcode ") + b +
                 (op >= 0x20 && op < 0x7f ? std::string(" ('") + char(op) + "')" : "") +
                 " is not allowed in a torch state dict");
      }
    }
  }
}

}  // namespace

PickleRef unpickle_torch(std::span<const std::byte> bytes, const std::string& name) {
  return Unpickler(bytes, name).run();
}

}  // namespace embedscope
