// dtrain::Checkpointer for Python. save() takes the bytes (any buffer) or a callable that streams
// them into a file-like CheckpointWriter, e.g. `lambda f: torch.save(state, f)`, called on rank 0
// only, the way the C++ API's writer callback is. Both save and load_latest run without the GIL:
// they wait in collectives while rank 0 writes or reads.
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>

#include "bindings.hpp"
#include "buffers.hpp"
#include "dtrain/checkpoint.hpp"
#include "paths.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace dtrain::python {
namespace {

// The file-like object a streaming save hands to Python: write() appends to the checkpoint. It
// is usable only during the callback; afterwards it is closed.
class PyWriter {
 public:
  explicit PyWriter(CheckpointWriter* writer) : writer_(writer) {}

  std::size_t write(py::handle data) {
    CheckpointWriter& w = open();
    Buffer b(data, Access::kRead, Typing::kBytes, "CheckpointWriter.write: data");
    {
      py::gil_scoped_release release;
      w.write(std::span(static_cast<const std::byte*>(b.data()), b.bytes()));
    }
    return b.bytes();
  }
  std::uint64_t tell() { return open().bytes(); }
  bool closed() const { return writer_ == nullptr; }
  void close() { writer_ = nullptr; }

 private:
  CheckpointWriter& open() {
    if (writer_ == nullptr) {
      throw py::value_error(
          "dtrain: CheckpointWriter: closed; expected it to be written only inside the save() "
          "callback");
    }
    return *writer_;
  }

  CheckpointWriter* writer_;
};

struct PyCheckpoint {
  std::int64_t step = 0;
  py::bytes data;
  py::bytes rank_data;
  int saved_world = 0;
  py::str path;
  py::list skipped;
};

std::span<const std::byte> bytes_of(const std::optional<Buffer>& b) {
  if (!b) return {};
  return {static_cast<const std::byte*>(b->data()), b->bytes()};
}

// Runs `fn(writer)` with the GIL; a Python exception becomes the C++ exception that fails the
// save on every rank, with its message.
std::function<void(CheckpointWriter&)> python_writer(const py::object& fn) {
  return [&fn](CheckpointWriter& w) {
    py::gil_scoped_acquire acquire;
    py::object writer = py::cast(PyWriter(&w));
    try {
      fn(writer);
    } catch (py::error_already_set& e) {
      writer.cast<PyWriter&>().close();
      throw std::runtime_error(std::string("dtrain: checkpoint: save callback: ") + e.what());
    }
    writer.cast<PyWriter&>().close();
  };
}

void save(Checkpointer& ckpt, std::int64_t step, const py::object& data, py::handle rank_data) {
  std::optional<Buffer> mine;
  if (!rank_data.is_none()) {
    mine.emplace(rank_data, Access::kRead, Typing::kBytes, "Checkpointer.save: rank_data");
  }
  if (PyCallable_Check(data.ptr()) != 0) {
    const auto write = python_writer(data);
    py::gil_scoped_release release;
    ckpt.save(step, write, bytes_of(mine));
    return;
  }
  std::optional<Buffer> shared;
  if (!data.is_none())
    shared.emplace(data, Access::kRead, Typing::kBytes, "Checkpointer.save: data");
  py::gil_scoped_release release;
  ckpt.save(step, bytes_of(shared), bytes_of(mine));
}

py::object load_latest(Checkpointer& ckpt) {
  std::optional<Checkpoint> c;
  {
    py::gil_scoped_release release;
    c = ckpt.load_latest();
  }
  if (!c) return py::none();
  PyCheckpoint out;
  out.step = c->step;
  out.data = py::bytes(reinterpret_cast<const char*>(c->data.data()), c->data.size());
  c->data = {};
  out.rank_data =
      py::bytes(reinterpret_cast<const char*>(c->rank_data.data()), c->rank_data.size());
  out.saved_world = c->saved_world;
  out.path = fs_decode(c->path);
  for (const auto& s : c->skipped) out.skipped.append(fs_decode(s));
  return py::cast(std::move(out));
}

}  // namespace

void bind_checkpoint(py::module_& m) {
  py::class_<PyWriter>(m, "CheckpointWriter", "File-like: write() appends to the checkpoint.")
      .def("write", &PyWriter::write, "data"_a,
           "Appends the buffer `data` to the checkpoint file; returns the bytes written.")
      .def("tell", &PyWriter::tell, "Bytes written so far.")
      .def(
          "flush", [](PyWriter&) {}, "Does nothing: the Checkpointer makes the file durable.")
      .def(
          "writable", [](PyWriter&) { return true; }, "True.")
      .def(
          "readable", [](PyWriter&) { return false; }, "False: the writer only appends.")
      .def(
          "seekable", [](PyWriter&) { return false; }, "False: the writer only appends.")
      .def_property_readonly("closed", &PyWriter::closed,
                             "True once the callable given to save() has returned.");

  py::class_<PyCheckpoint>(m, "Checkpoint", "What load_latest() found.")
      .def_readonly("step", &PyCheckpoint::step, "The step given to save().")
      .def_readonly("data", &PyCheckpoint::data, "Rank 0's data, as bytes.")
      .def_readonly("rank_data", &PyCheckpoint::rank_data,
                    "This rank's rank_data, as bytes (empty when the saving job had fewer ranks).")
      .def_readonly("saved_world", &PyCheckpoint::saved_world,
                    "How many ranks the job that saved it had.")
      .def_readonly("path", &PyCheckpoint::path, "The checkpoint file.")
      .def_readonly("skipped", &PyCheckpoint::skipped,
                    "Newer checkpoint files passed over as corrupt or incomplete.")
      .def("__repr__", [](const PyCheckpoint& c) {
        return "<dtrain.Checkpoint step " + std::to_string(c.step) + " from " +
               std::string(py::str(c.path)) + ">";
      });

  py::class_<Checkpointer>(m, "Checkpointer",
                           "Crash-safe checkpoints written by rank 0; save and load_latest are "
                           "collective.")
      .def(py::init([](Context& ctx, py::handle dir, int keep, bool discard_newer) {
             CheckpointOptions options;
             options.keep = keep;
             options.discard_newer = discard_newer;
             return std::make_unique<Checkpointer>(ctx, fs_encode(dir, "Checkpointer: dir"),
                                                   options);
           }),
           "ctx"_a, "dir"_a, py::kw_only(), "keep"_a = 3, "discard_newer"_a = false,
           py::keep_alive<1, 2>(),
           "Checkpoints in directory `dir` (str, bytes or PathLike), the newest `keep` kept (0: "
           "all). A save refuses while `dir` holds a newer step, unless `discard_newer`.")
      .def("save", &save, "step"_a, "data"_a = py::none(), "rank_data"_a = py::none(),
           "Collective. Rank 0 keeps `data` (a buffer, or a callable given a CheckpointWriter); "
           "`rank_data` is this rank's own small blob.")
      .def("load_latest", &load_latest,
           "Collective. The newest valid checkpoint as a Checkpoint, or None.")
      .def_property_readonly(
          "dir", [](const Checkpointer& c) { return fs_decode(c.dir()); },
          "The checkpoint directory.");
}

}  // namespace dtrain::python
