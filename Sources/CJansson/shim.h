// jansson (libjansson-dev): JSON values for the JSON Lines sink. Variadic calls go through CCastShims.
#include <jansson.h>
