// libyaml (libyaml-dev): the YAML 1.1 event parser behind castline's config files. Its marks give
// every node a line and column, so config errors point at file:line:column.
#include <yaml.h>
