#include "python_stacks.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "report/python_frames.hpp"

namespace dtrain::cli {
namespace {

// An open file, closed when it goes.
struct Fd {
  int fd;
  explicit Fd(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  bool read_at(std::uint64_t offset, void* out, std::size_t size) const {
    return fd >= 0 &&
           ::pread(fd, out, size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
  }
};

// The addresses of `names` in an ELF file's symbol tables (.dynsym, then .symtab), as linked (not
// yet moved by the load base); the lowest PT_LOAD address; whether it is position independent.
struct ElfSymbols {
  std::map<std::string, std::uint64_t> found;
  std::uint64_t first_load = 0;
  bool position_independent = false;
};

std::optional<ElfSymbols> elf_symbols(const std::string& path,
                                      const std::vector<std::string>& names) {
  const Fd file(path);
  Elf64_Ehdr header{};
  if (!file.read_at(0, &header, sizeof header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum > 4096) {
    return std::nullopt;
  }
  ElfSymbols out;
  out.position_independent = header.e_type == ET_DYN;
  out.first_load = UINT64_MAX;
  for (unsigned i = 0; i < header.e_phnum && i < 256; ++i) {
    Elf64_Phdr p{};
    if (!file.read_at(header.e_phoff + i * sizeof p, &p, sizeof p)) return std::nullopt;
    if (p.p_type == PT_LOAD)
      out.first_load = std::min<std::uint64_t>(out.first_load, p.p_vaddr & ~0xFFFULL);
  }
  if (out.first_load == UINT64_MAX) return std::nullopt;
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!file.read_at(header.e_shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr))) {
    return std::nullopt;
  }
  for (const std::uint32_t type : {SHT_DYNSYM, SHT_SYMTAB}) {
    for (const Elf64_Shdr& table : sections) {
      if (table.sh_type != type || table.sh_link >= sections.size() ||
          table.sh_entsize != sizeof(Elf64_Sym)) {
        continue;
      }
      const Elf64_Shdr& strings = sections[table.sh_link];
      // The string table whole (a few hundred KB for libpython's .dynstr), the symbols in pieces.
      if (strings.sh_size > (64u << 20)) continue;
      std::string names_text(strings.sh_size, '\0');
      if (!file.read_at(strings.sh_offset, names_text.data(), names_text.size())) continue;
      std::vector<Elf64_Sym> symbols(1024);
      const std::uint64_t count = table.sh_size / sizeof(Elf64_Sym);
      for (std::uint64_t first = 0; first < count; first += symbols.size()) {
        const std::uint64_t n = std::min<std::uint64_t>(symbols.size(), count - first);
        if (!file.read_at(table.sh_offset + first * sizeof(Elf64_Sym), symbols.data(),
                          n * sizeof(Elf64_Sym))) {
          break;
        }
        for (std::uint64_t k = 0; k < n; ++k) {
          const Elf64_Sym& s = symbols[k];
          if (s.st_value == 0 || s.st_name >= names_text.size()) continue;
          const std::string name(names_text.c_str() + s.st_name);
          for (const std::string& want : names) {
            if (name == want) out.found.emplace(name, s.st_value);
          }
        }
      }
      if (out.found.size() == names.size()) return out;
    }
  }
  return out;
}

// The files the process maps that may hold the interpreter (its executable, a libpython), each
// with the address its first page (file offset 0) is mapped at.
std::vector<std::pair<std::string, std::uint64_t>> interpreter_files(long pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::vector<std::pair<std::string, std::uint64_t>> files;
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, device, inode, path;
    in >> range >> perms >> offset >> device >> inode >> path;
    if (path.empty() || offset != "00000000") continue;
    const std::string base = path.substr(path.rfind('/') + 1);
    if (!base.starts_with("python3") && base.find("libpython3") == std::string::npos) continue;
    bool seen = false;
    for (const auto& f : files) seen = seen || f.first == path;
    if (!seen) files.emplace_back(path, std::stoull(range.substr(0, range.find('-')), nullptr, 16));
  }
  return files;
}

}  // namespace

std::optional<PythonStacks> python_stacks(long pid) {
  for (const auto& [path, mapped_at] : interpreter_files(pid)) {
    const auto elf = elf_symbols(path, {"_PyRuntime", "Py_Version"});
    if (!elf || !elf->found.contains("_PyRuntime")) continue;
    const std::uint64_t shift = elf->position_independent ? mapped_at - elf->first_load : 0;
    int error = 0;
    const report::Memory memory = [pid, &error](std::uint64_t address, void* out,
                                                std::size_t size) {
      iovec local{out, size};
      iovec remote{reinterpret_cast<void*>(address), size};
      const ssize_t got = ::process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
      if (got < 0 && error == 0) error = errno;
      return got == static_cast<ssize_t>(size);
    };
    PythonStacks out;
    std::uint64_t version = 0;
    const auto v = elf->found.find("Py_Version");
    if (v == elf->found.end() || !memory(v->second + shift, &version, sizeof version)) {
      out.problem = error != 0 ? std::string("its memory cannot be read: ") + std::strerror(error)
                               : "its Python version cannot be read (no Py_Version: before 3.11)";
      return out;
    }
    if (!report::python_layout_known(version)) {
      out.problem =
          "Python " + report::python_version_text(version) + ": only 3.11's frames are read here";
      return out;
    }
    out.threads = report::read_python_threads(memory, elf->found.at("_PyRuntime") + shift);
    if (out.threads.empty()) out.problem = "no Python frame could be read";
    return out;
  }
  return std::nullopt;
}

}  // namespace dtrain::cli
