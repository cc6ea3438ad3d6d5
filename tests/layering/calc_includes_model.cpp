// Must compile with the calc layer's include path: calc may use the catalogue's types.
#include <k3plan/kv.hpp>
#include <k3plan/model.hpp>
int main() { return 0; }
