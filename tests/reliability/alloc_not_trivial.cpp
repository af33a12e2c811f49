// Deliberately broken input for reliability.alloc_not_trivially_copyable: shared objects
// travel between ranks as bytes, so dsm::alloc of a type that owns memory must not compile.
#include <dsm/dsm.hpp>

#include <string>
int main(int argc, char** argv) {
  dsm::init(argc, argv);
  std::string* sh_names = dsm::alloc<std::string>(10);
  sh_names[0] = "x";
  dsm::finalize();
}
