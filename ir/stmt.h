// Statement base class and blocks.
// Statements are owned by exactly one Block (an intrusive doubly linked list, so insert and
// erase are O(1)). Each statement records its users (one entry per operand slot that refers to
// it), which makes replace_all_uses_with proportional to the number of uses. Destroying a
// statement that still has users nulls their operand slots; the verifier reports such dangling
// references ("refers to an erased statement").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "ir/operand_list.h"
#include "ir/small_vector.h"
#include "ir/stmt_kinds.h"
#include "ir/stmt_pool.h"
#include "ir/type.h"

namespace pb::ir {

class Block;
class Relocator;

// A container's nested blocks, by value: walks ask every
// container for them, and a std::vector cost a heap allocation each time.
class BlockList {
 public:
  BlockList() = default;
  static constexpr size_t kMax = 6;  // an offloaded task: tls/mesh/bls prologues, body, bls/tls epilogues
  explicit BlockList(Block* only) : items_{only}, size_(1) {}
  BlockList(Block* first, Block* second) : items_{first, second}, size_(2) {}
  BlockList(std::initializer_list<Block*> blocks) : size_(blocks.size()) {
    std::copy(blocks.begin(), blocks.end(), items_);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Block* operator[](size_t i) const { return items_[i]; }
  Block* at(size_t i) const;
  Block* front() const { return at(0); }
  Block* const* begin() const { return items_; }
  Block* const* end() const { return items_ + size_; }

 private:
  Block* items_[kMax] = {};
  size_t size_ = 0;
};

class Stmt {
 public:
  virtual ~Stmt();
  Stmt& operator=(const Stmt&) = delete;
  // Statements live in the statement pool, so those created together are adjacent in memory.
  static void* operator new(size_t bytes) { return stmt_pool::allocate(bytes); }
  static void operator delete(void* p, size_t bytes) noexcept { stmt_pool::deallocate(p, bytes); }

  StmtKind kind() const { return kind_; }
  int id = -1;  // the `$N` name; unique within a kernel
  DataType type;

  Block* parent() const { return parent_; }
  Stmt* prev() const { return prev_; }
  Stmt* next() const { return next_; }
  // The container statement whose block holds this one, or nullptr at the kernel root.
  Stmt* parent_stmt() const;

  size_t num_operands() const { return operands_.size(); }
  Stmt* operand(size_t i) const { return operands_.ops()[i]; }
  std::span<Stmt* const> operands() const { return {operands_.ops(), operands_.size()}; }
  void set_operand(size_t i, Stmt* s);
  // Replaces every occurrence of `from` among this statement's operands by `to`.
  void replace_operand(Stmt* from, Stmt* to);

  // One use per operand slot of another statement that refers to this one (a user with the same
  // operand twice appears twice). Removal is O(1): each slot remembers its position here.
  // Packed into 8 bytes (user address below 2^48, slot below 2^16), since every statement
  // keeps a list of them.
  class Use {
   public:
    Use() = default;
    Use(Stmt* user, uint32_t slot) : bits_(reinterpret_cast<uintptr_t>(user) | uint64_t{slot} << kSlotShift) {}
    // Addresses fit in 48 bits on every 64-bit target we build for (user space is 47 bits).
    Stmt* user() const { return reinterpret_cast<Stmt*>(bits_ & kUserMask); }  // NOLINT(performance-no-int-to-ptr)
    uint32_t slot() const { return static_cast<uint32_t>(bits_ >> kSlotShift); }

   private:
    static constexpr int kSlotShift = 48;
    static constexpr uint64_t kUserMask = (uint64_t{1} << kSlotShift) - 1;
    uint64_t bits_;
  };
  std::span<const Use> uses() const { return {uses_.data(), uses_.size()}; }
  size_t num_uses() const { return uses_.size(); }
  bool has_users() const { return !uses_.empty(); }
  // The users, one entry per use (a copy; prefer uses() in hot code).
  std::vector<Stmt*> users() const;
  void replace_all_uses_with(Stmt* replacement);

  // Unlinks every operand (slots become null). For statements being discarded in bulk: their
  // operands then no longer count them as users.
  void drop_operands();

  // 1 plus the statements nested in this one's blocks.
  size_t subtree_size() const;

  // Nested blocks of container statements (if, for, while), in printing order; may hold nullptr
  // for an absent else branch.
  virtual BlockList blocks() const { return {}; }
  // Whether the kind holds blocks (a trait check, no allocation).
  bool is_container() const { return ir::is_container(kind_); }
  // Copies attributes and operands (registering uses) but not nested statements: containers
  // come back with empty blocks. The id is copied; callers give clones a fresh one.
  virtual std::unique_ptr<Stmt> clone_shallow() const = 0;

 protected:
  explicit Stmt(StmtKind k) : kind_(k) {}
  Stmt(const Stmt& other);
  // Relocation (ir/relayout.h): the new statement takes over `other`'s identity and every link to
  // it (its place in its block, its operands' use entries, its users' operand slots); `other` is
  // left unlinked, with no operands and no users, to be destroyed. Nested blocks still name
  // `other` as their owner until the caller repoints them.
  Stmt(Stmt&& other) noexcept;
  void add_operand(Stmt* s);

 private:
  friend class Block;
  friend class Relocator;
  friend class Numbering;
  void link_use(size_t slot);
  void unlink_use(size_t slot);
  // unlink_use for the destructor: a use list out of sync is reported (deferred), not thrown.
  void unlink_use_nothrow(size_t slot) noexcept;
  bool use_in_sync(size_t slot) const;

  uint32_t position_ = UINT32_MAX;  // ir/numbering.h: read only through the Numbering that set it
  StmtKind kind_;
  Block* parent_ = nullptr;
  Stmt* prev_ = nullptr;
  Stmt* next_ = nullptr;
  OperandList operands_;  // with, per slot, the index of its Use in the operand's uses_
  SmallVector<Use, 2> uses_;
};

class Block {
 public:
  explicit Block(Stmt* owner = nullptr) : owner_(owner) {}
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Stmt* owner() const { return owner_; }
  Stmt* front() const { return first_; }
  Stmt* back() const { return last_; }
  size_t size() const { return size_; }
  // Statements in this block and every block nested in it, kept up to date on insert and
  // detach (O(nesting depth) each), so counting a kernel costs nothing.
  size_t total_size() const { return total_; }
  bool empty() const { return size_ == 0; }

  Stmt* push_back(std::unique_ptr<Stmt> s);
  Stmt* push_front(std::unique_ptr<Stmt> s);
  Stmt* insert_before(Stmt* pos, std::unique_ptr<Stmt> s);  // pos == nullptr appends
  Stmt* insert_after(Stmt* pos, std::unique_ptr<Stmt> s);   // pos == nullptr prepends
  // Unlinks `s` (which must be in this block) and hands ownership back; uses stay intact.
  std::unique_ptr<Stmt> detach(Stmt* s);
  // Unlinks and destroys `s`.
  void erase(Stmt* s);

  template <class T, class... Args>
  T* emplace_back(Args&&... args) {
    return static_cast<T*>(push_back(std::make_unique<T>(std::forward<Args>(args)...)));
  }

  class iterator {
   public:
    using value_type = Stmt*;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(Stmt* s) : s_(s) {}
    Stmt* operator*() const { return s_; }
    iterator& operator++() {
      s_ = s_->next();
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const iterator&) const = default;

   private:
    Stmt* s_ = nullptr;
  };
  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(nullptr); }
  // Snapshot of the statements, safe to iterate while the block is mutated.
  std::vector<Stmt*> statements() const;

 private:
  friend class Stmt;
  friend class Relocator;
  void link(Stmt* before_this, Stmt* s);
  void add_to_totals(std::ptrdiff_t n);
  Stmt* owner_;
  size_t total_ = 0;
  Stmt* first_ = nullptr;
  Stmt* last_ = nullptr;
  size_t size_ = 0;
};

// True if `outer` is `inner` or encloses it.
bool block_encloses(const Block* outer, const Block* inner);

// The kind traits of ir/stmt_kinds.h, for a statement (false for nullptr).
inline bool is_loop(const Stmt* s) { return s && is_loop(s->kind()); }
inline bool is_counted_loop(const Stmt* s) { return s && is_counted_loop(s->kind()); }

}  // namespace pb::ir
