// Must NOT compile with the calc layer's include path: calc sits below engines (ARCHITECTURE.md).
#include <k3plan/engine.hpp>
int main() { return 0; }
