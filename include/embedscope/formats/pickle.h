// A restricted unpickler for the data.pkl that torch.save writes for a state dict.
//
// It is a stack machine over a whitelist of opcodes; it never imports or calls anything.
// GLOBAL is accepted only for names that have a fixed, data-only meaning here:
//   collections.OrderedDict                  -> an empty dict (REDUCE with ())
//   torch._utils._rebuild_tensor_v2          -> a tensor record (REDUCE with its 6-7 args)
//   torch._utils._rebuild_parameter          -> its first argument (a tensor record)
//   torch.{Float,Half,BFloat16,Double,Long,Int,Short,Char,Byte,Bool}Storage
//                                            -> a dtype tag used in persistent ids
// Integer and bool storages are listed because real checkpoints carry integer buffers
// (position_ids, attention masks); they are tags only and are never loaded as matrices.
// Opcodes (pickletools names): PROTO FRAME STOP MARK POP POP_MARK DUP GLOBAL STACK_GLOBAL
// BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_LIST
// APPEND APPENDS EMPTY_DICT SETITEM SETITEMS BUILD REDUCE BINPERSID NONE NEWTRUE NEWFALSE BININT
// BININT1 BININT2 LONG1 BINFLOAT BINUNICODE SHORT_BINUNICODE BINUNICODE8. Everything else throws
// Error(kUnsupported) naming the opcode and its byte offset; a foreign global throws
// Error(kUnsupported) naming "module.name". Structural errors (stack underflow, a REDUCE on a
// non-callable, a persistent id that is not ('storage', type, key, location, numel)) throw
// Error(kCorrupt) with the byte offset. Nesting is capped (kMaxPickleDepth) so destruction never
// recurses deeply.
//
//   PickleRef root = unpickle_torch(pkl_bytes, "model.bin:archive/data.pkl");
//   for (auto& [k, v] : root->dict) ...   // v->kind == PickleKind::kTensor
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace embedscope {

inline constexpr int kMaxPickleDepth = 100;

enum class PickleKind {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kTuple,
  kList,
  kDict,
  kGlobal,
  kStorage,
  kTensor,
};

struct PickleObject;
using PickleRef = std::shared_ptr<PickleObject>;

struct PickleObject {
  PickleKind kind = PickleKind::kNone;
  int depth = 1;         // nesting depth (<= kMaxPickleDepth)
  bool adopted = false;  // already inside another container
  int64_t i = 0;         // kInt, kBool
  double f = 0.0;        // kFloat
  std::string s;         // kString: the text; kGlobal: "module.name"; kStorage: dtype ("F32")
  std::vector<PickleRef> items;                       // kTuple, kList
  std::vector<std::pair<PickleRef, PickleRef>> dict;  // kDict (insertion order)
  // kStorage: persistent id ('storage', <type>, key, location, numel)
  std::string storage_key, location;
  uint64_t storage_numel = 0;
  // kTensor: _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks)
  PickleRef storage;
  uint64_t storage_offset = 0;
  std::vector<uint64_t> shape, stride;
};

// Element type and size of a torch storage class name ("FloatStorage" -> {"F32", 4});
// {"", 0} when not a storage class this reader knows.
std::pair<std::string, size_t> torch_storage_dtype(std::string_view class_name);

// Runs the restricted unpickler over `bytes`; returns the object left by STOP.
// `name` prefixes error messages.
PickleRef unpickle_torch(std::span<const std::byte> bytes, const std::string& name);

}  // namespace embedscope
