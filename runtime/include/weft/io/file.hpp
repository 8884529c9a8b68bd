// weft/io/file.hpp — files on the loop that opens them.
//
// Reads and writes go through staging buffers owned by their operation (a dropped operation
// never lets the kernel write into freed memory). read_at / write_at are positional and leave no
// state behind; read / write use the file object's own position, advanced by what they moved.
// Every call answers expected<T, std::error_code> (a missing path is ENOENT, too many open files
// EMFILE); end of file is a read of 0 bytes.
#pragma once

#include <weft/compiler_support.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include <sys/stat.h>

#include <weft/expected.hpp>
#include <weft/io/detail/io_op.hpp>
#include <weft/io/detail/stream_core.hpp>
#include <weft/task.hpp>

namespace weft {

struct open_options {
  bool read = true;
  bool write = false;
  bool append = false;     // every write goes to the end
  bool create = false;     // O_CREAT
  bool truncate = false;   // O_TRUNC
  bool exclusive = false;  // O_EXCL (with create): an existing file is EEXIST
  std::uint32_t mode = 0644;
};

namespace detail {
class file_op final : public staged_op {
 public:
  file_op(std::size_t staging_size, stream_ref core) : staged_op(staging_size), core_(std::move(core)) {}
  std::string path;
  std::string path2;
  struct statx stx {};
  io_owner opener;  // an open's loop: it closes a descriptor opened for a caller who has gone

 private:
  // An open whose caller went before it completed: nobody will own the descriptor it opened.
  void orphaned(std::int64_t result) noexcept override {
    if (opcode == platform::io_opcode::openat && result >= 0) close_descriptor(opener, static_cast<int>(result));
  }
  stream_ref core_;  // keeps the descriptor open while the kernel may use it
};
struct file_read_finish {
  std::span<std::byte> dst;
  expected<std::size_t, std::error_code> operator()(file_op* op, std::int64_t result) const;
};
struct file_count_finish {
  expected<std::size_t, std::error_code> operator()(const file_op*, std::int64_t result) const;
};
struct file_void_finish {
  expected<void, std::error_code> operator()(const file_op*, std::int64_t result) const;
};
struct file_size_finish {
  expected<std::uint64_t, std::error_code> operator()(const file_op* op, std::int64_t result) const;
};
struct file_fd_finish {
  expected<int, std::error_code> operator()(const file_op*, std::int64_t result) const;
};
// A positional read. At its first poll it asks the driver for the bytes now (a page-cache hit
// needs neither an operation nor a staging buffer, and the task does not suspend); otherwise it
// submits an operation through a staging buffer like every other leaf.
class file_read_leaf {
 public:
  using inner_leaf = io_leaf<file_op, file_read_finish>;
  using result_type = inner_leaf::result_type;

  file_read_leaf(stream_ref core, std::span<std::byte> dst, std::uint64_t offset) noexcept
      : core_(std::move(core)), dst_(dst), offset_(offset) {}

  bool poll_ready(const waker& w) {
    if (!inner_ && !answered_) {
      if (try_now()) return true;
      inner_.emplace(submitted());
    }
    return answered_ || inner_->poll_ready(w);
  }
  result_type await_resume() {
    if (answered_) return static_cast<std::size_t>(now_);
    return inner_->await_resume();
  }

 private:
  bool try_now();
  inner_leaf submitted();

  stream_ref core_;
  std::span<std::byte> dst_;
  std::uint64_t offset_;
  std::int64_t now_ = 0;
  bool answered_ = false;
  std::optional<inner_leaf> inner_;
};

}  // namespace detail

class file {
 public:
  using read_leaf = detail::file_read_leaf;
  using count_leaf = detail::io_leaf<detail::file_op, detail::file_count_finish>;
  using void_leaf = detail::io_leaf<detail::file_op, detail::file_void_finish>;
  using size_leaf = detail::io_leaf<detail::file_op, detail::file_size_finish>;

  file() = default;

  // Opens `path` on the current loop. Options that ask for nothing (neither read nor write) are
  // invalid_argument.
  static task<expected<file, std::error_code>> open(std::string path, open_options options = {});
  // Whole-file helpers.
  static task<expected<std::vector<std::byte>, std::error_code>> read_all(std::string path);
  static void_leaf remove(std::string path);
  static void_leaf rename(std::string from, std::string to);

  read_leaf read_at(std::span<std::byte> dst, std::uint64_t offset);
  count_leaf write_at(std::span<const std::byte> src, std::uint64_t offset);
  // At the file's own position, which they advance.
  task<expected<std::size_t, std::error_code>> read(std::span<std::byte> dst);
  task<expected<std::size_t, std::error_code>> write(std::span<const std::byte> src);
  // Reads from the current position to the end of the file.
  task<expected<std::vector<std::byte>, std::error_code>> read_to_end();

  void_leaf sync_all();   // fsync
  void_leaf sync_data();  // fdatasync
  size_leaf size();       // statx: the file's size in bytes
  void_leaf set_len(std::uint64_t length);

  std::uint64_t position() const noexcept { return position_; }
  void seek(std::uint64_t position) noexcept { position_ = position; }
  bool is_open() const noexcept { return core_ && core_->fd >= 0; }
  int native_handle() const noexcept { return core_ ? core_->fd : -1; }
  // On the owner thread the descriptor closes now; on another thread the close goes to the owner's
  // loop with this object's reference, leaving the object closed (as a stream's close does).
  void close() noexcept {
    detail::stream_core* core = core_.get();
    if (core == nullptr) return;
    if (core->owner.on_owner_thread()) {
      core->close();
    } else {
      detail::stream_core::drop(core_.detach(), true);
    }
  }

 private:
  explicit file(detail::stream_ref core, bool append) noexcept : core_(std::move(core)), append_(append) {}

  detail::stream_ref core_;
  std::uint64_t position_ = 0;
  bool append_ = false;
};

}  // namespace weft
