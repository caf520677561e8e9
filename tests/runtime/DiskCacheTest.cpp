#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "TempDir.h"
#include "qla/runtime/DiskCache.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Sha256.h"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using qla::DiskCache;
using qla::Json;

namespace {

const std::string kKey = "3f2a9c0d1e7b44aa5d6e8f9012ab34cd56ef7890a1b2c3d4e5f60718293a4b5c";

std::map<std::string, std::string> sampleFiles() {
  std::string cubin = "\x7f" "ELF";
  for (int i = 0; i < 5000; ++i)
    cubin += static_cast<char>(i % 251); // includes NUL bytes
  return {{"kernel.ptx", ".version 8.0\n.target sm_90a\n"}, {"kernel.cubin", cubin}};
}

Json sampleMetadata() {
  Json meta = Json::object();
  meta.set("kernel", "gemm");
  meta.set("grid", Json(Json::Array{132, 1, 1}));
  return meta;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

int countTemporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with("."))
      ++n;
  return n;
}

} // namespace

TEST_CASE("disk cache publishes and looks up an entry", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "qla-0.1.0+sm_90a");
  CHECK(cache.dir() == tmp.path() / "qla-0.1.0+sm_90a");
  CHECK_FALSE(cache.lookup(kKey).has_value());

  const auto files = sampleFiles();
  const qla::CacheEntry published = cache.publish(kKey, files, sampleMetadata());
  CHECK(published.dir == cache.dir() / kKey);
  CHECK(published.files == files);

  const auto entry = cache.lookup(kKey);
  REQUIRE(entry.has_value());
  CHECK(entry->dir == cache.dir() / kKey);
  CHECK(entry->files == files);
  CHECK(entry->manifest.at("kernel").asString() == "gemm");
  CHECK(entry->manifest.at("grid") == Json(Json::Array{132, 1, 1}));
  const Json& cubinInfo = entry->manifest.at("files").at("kernel.cubin");
  CHECK(cubinInfo.at("sha256").asString() == qla::sha256Hex(files.at("kernel.cubin")));
  CHECK(cubinInfo.at("bytes").asInt() == static_cast<std::int64_t>(files.at("kernel.cubin").size()));
  CHECK(entry->manifest == published.manifest);

  // On disk: the files and a manifest, nothing else.
  CHECK(readFile(cache.dir() / kKey / "kernel.cubin") == files.at("kernel.cubin"));
  CHECK(Json::parse(readFile(cache.dir() / kKey / "manifest.json")) == entry->manifest);
  CHECK(cache.keys() == std::vector<std::string>{kKey});
  CHECK(countTemporaries(cache.dir()) == 0);
  std::string why;
  CHECK(cache.verify(kKey, &why));
}

TEST_CASE("disk cache entries are separated by version tag", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache v1(tmp.path(), "qla-0.1.0+sm_90a");
  DiskCache v2(tmp.path(), "qla-0.2.0+sm_90a");
  v1.publish(kKey, sampleFiles(), sampleMetadata());
  CHECK(v1.lookup(kKey).has_value());
  CHECK_FALSE(v2.lookup(kKey).has_value());
}

TEST_CASE("disk cache drops an entry with one corrupted byte", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  cache.publish(kKey, sampleFiles(), sampleMetadata());
  const fs::path cubin = cache.dir() / kKey / "kernel.cubin";
  std::string data = readFile(cubin);
  data[1234] ^= 0x01;
  writeFile(cubin, data);

  std::string why;
  CHECK_FALSE(cache.verify(kKey, &why));
  CHECK_THAT(why, ContainsSubstring("kernel.cubin") && ContainsSubstring("sha256"));
  CHECK(fs::exists(cache.dir() / kKey)); // verify only reports

  CHECK_FALSE(cache.lookup(kKey).has_value());
  CHECK_FALSE(fs::exists(cache.dir() / kKey));
  CHECK(cache.keys().empty());
  CHECK(countTemporaries(cache.dir()) == 0);

  // The caller rebuilds: publishing again works.
  cache.publish(kKey, sampleFiles(), sampleMetadata());
  REQUIRE(cache.lookup(kKey).has_value());
  CHECK(cache.lookup(kKey)->files == sampleFiles());
}

TEST_CASE("disk cache drops an entry with a truncated file", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  cache.publish(kKey, sampleFiles(), sampleMetadata());
  const fs::path cubin = cache.dir() / kKey / "kernel.cubin";
  fs::resize_file(cubin, 100);
  std::string why;
  CHECK_FALSE(cache.verify(kKey, &why));
  CHECK_THAT(why, ContainsSubstring("kernel.cubin"));
  CHECK_FALSE(cache.lookup(kKey).has_value());
  CHECK_FALSE(fs::exists(cache.dir() / kKey));
}

TEST_CASE("disk cache drops an entry with a missing file", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  cache.publish(kKey, sampleFiles(), sampleMetadata());
  fs::remove(cache.dir() / kKey / "kernel.ptx");
  CHECK_FALSE(cache.lookup(kKey).has_value());
  CHECK_FALSE(fs::exists(cache.dir() / kKey));
}

TEST_CASE("disk cache drops an entry whose manifest was altered", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  cache.publish(kKey, sampleFiles(), sampleMetadata());
  const fs::path manifest = cache.dir() / kKey / "manifest.json";

  SECTION("a metadata value changed but still valid JSON") {
    std::string text = readFile(manifest);
    const auto pos = text.find("132");
    REQUIRE(pos != std::string::npos);
    text[pos] = '4';
    writeFile(manifest, text);
    std::string why;
    CHECK_FALSE(cache.verify(kKey, &why));
    CHECK_THAT(why, ContainsSubstring("manifest_sha256"));
  }
  SECTION("the manifest cut in half") {
    const std::string text = readFile(manifest);
    writeFile(manifest, text.substr(0, text.size() / 2));
    std::string why;
    CHECK_FALSE(cache.verify(kKey, &why));
    CHECK_THAT(why, ContainsSubstring("does not parse"));
  }
  CHECK_FALSE(cache.lookup(kKey).has_value());
  CHECK_FALSE(fs::exists(cache.dir() / kKey));
}

TEST_CASE("disk cache never loads a half-written entry without a manifest", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  fs::create_directories(cache.dir() / kKey);
  writeFile(cache.dir() / kKey / "kernel.ptx", ".version 8.0\n");
  std::string why;
  CHECK_FALSE(cache.verify(kKey, &why));
  CHECK_THAT(why, ContainsSubstring("manifest.json"));
  CHECK_FALSE(cache.lookup(kKey).has_value());
  CHECK_FALSE(fs::exists(cache.dir() / kKey));

  // A stray file where an entry belongs is removed as well.
  writeFile(cache.dir() / kKey, "junk");
  CHECK_FALSE(cache.lookup(kKey).has_value());
  CHECK_FALSE(fs::exists(cache.dir() / kKey));

  cache.publish(kKey, sampleFiles(), sampleMetadata());
  CHECK(cache.lookup(kKey).has_value());
}

TEST_CASE("disk cache publish of an existing key returns the existing entry", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  cache.publish(kKey, sampleFiles(), sampleMetadata());

  // The first writer wins: a second publish (here with different contents) gets the first entry.
  std::map<std::string, std::string> other = {{"kernel.ptx", "other"}};
  const qla::CacheEntry second = cache.publish(kKey, other, Json::object());
  CHECK(second.files == sampleFiles());
  CHECK(second.manifest.at("kernel").asString() == "gemm");
  CHECK(cache.keys().size() == 1);
  CHECK(countTemporaries(cache.dir()) == 0);

  // Unless the existing entry is corrupt: then the new one replaces it.
  writeFile(cache.dir() / kKey / "kernel.ptx", "garbage");
  const qla::CacheEntry third = cache.publish(kKey, other, Json::object());
  CHECK(third.files == other);
  REQUIRE(cache.lookup(kKey).has_value());
  CHECK(cache.lookup(kKey)->files == other);
  CHECK(countTemporaries(cache.dir()) == 0);
}

TEST_CASE("disk cache removes stale temporary folders", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  fs::create_directories(cache.dir());
  const fs::path stale = cache.dir() / ".tmp-abc-123-deadbeef";
  const fs::path fresh = cache.dir() / ".tmp-abc-456-cafef00d";
  const fs::path trash = cache.dir() / ".trash-abc-789-0123";
  for (const fs::path& dir : {stale, fresh, trash}) {
    fs::create_directories(dir);
    writeFile(dir / "kernel.ptx", "partial");
  }
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));

  cache.publish(kKey, sampleFiles(), sampleMetadata());
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(fresh)); // may belong to a writer that is still running
  CHECK_FALSE(fs::exists(trash));
  CHECK(cache.keys() == std::vector<std::string>{kKey});

  cache.removeStaleTemporaries(std::chrono::seconds(0));
  CHECK_FALSE(fs::exists(fresh));
  CHECK(cache.lookup(kKey).has_value());
}

TEST_CASE("disk cache remove and clear", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  cache.publish("aa", sampleFiles(), Json());
  cache.publish("bb", sampleFiles(), Json());
  cache.publish("cc", sampleFiles(), Json());
  CHECK(cache.keys() == std::vector<std::string>{"aa", "bb", "cc"});
  cache.remove("bb");
  cache.remove("bb"); // absent: no error
  CHECK(cache.keys() == std::vector<std::string>{"aa", "cc"});
  cache.clear();
  CHECK(cache.keys().empty());
  CHECK(countTemporaries(cache.dir()) == 0);
  CHECK_FALSE(cache.lookup("aa").has_value());
}

TEST_CASE("disk cache rejects bad keys, file names, metadata and version tags", "[runtime][cache]") {
  qla::test::TempDir tmp;
  DiskCache cache(tmp.path(), "v");
  for (const std::string& key : {std::string(""), std::string("../x"), std::string("a/b"),
                                std::string("a.b"), std::string(".tmp-x"), std::string(129, 'a')})
    CHECK_THROWS_WITH(cache.lookup(key), ContainsSubstring("invalid key") &&
                                             ContainsSubstring("[A-Za-z0-9_-]"));
  CHECK_NOTHROW(cache.lookup(std::string(128, 'a')));

  CHECK_THROWS_WITH(cache.publish(kKey, {{"manifest.json", "x"}}, Json()),
                    ContainsSubstring("invalid file name 'manifest.json'"));
  CHECK_THROWS_WITH(cache.publish(kKey, {{".hidden", "x"}}, Json()),
                    ContainsSubstring("invalid file name '.hidden'"));
  CHECK_THROWS_WITH(cache.publish(kKey, {{"a/b", "x"}}, Json()),
                    ContainsSubstring("invalid file name 'a/b'"));
  Json reserved = Json::object();
  reserved.set("files", 1);
  CHECK_THROWS_WITH(cache.publish(kKey, sampleFiles(), reserved),
                    ContainsSubstring("reserved member 'files'"));
  CHECK_THROWS_WITH(cache.publish(kKey, sampleFiles(), Json(Json::Array{1})),
                    ContainsSubstring("must be a JSON object, got array"));
  CHECK(cache.keys().empty());

  CHECK_THROWS_WITH(DiskCache(tmp.path(), "../up"), ContainsSubstring("invalid version tag '../up'"));
  CHECK_THROWS_WITH(DiskCache(tmp.path(), ""), ContainsSubstring("invalid version tag"));
  CHECK_THROWS_WITH(DiskCache(tmp.path(), "a/b"), ContainsSubstring("invalid version tag"));
}

TEST_CASE("disk cache default root follows the environment", "[runtime][cache]") {
  struct SavedEnv {
    std::string name;
    std::optional<std::string> value;
    explicit SavedEnv(std::string n) : name(std::move(n)) {
      if (const char* v = std::getenv(name.c_str()))
        value = v;
    }
    ~SavedEnv() {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  };
  SavedEnv qla("QLA_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");

  ::setenv("QLA_CACHE_DIR", "/tmp/qla-explicit", 1);
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  ::setenv("HOME", "/tmp/home", 1);
  CHECK(DiskCache::defaultRoot() == fs::path("/tmp/qla-explicit"));
  ::setenv("QLA_CACHE_DIR", "", 1);
  CHECK(DiskCache::defaultRoot() == fs::path("/tmp/xdg/qla"));
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(DiskCache::defaultRoot() == fs::path("/tmp/home/.cache/qla"));
  ::unsetenv("HOME");
  ::unsetenv("QLA_CACHE_DIR");
  CHECK_THROWS_WITH(DiskCache::defaultRoot(), ContainsSubstring("QLA_CACHE_DIR"));
}
