// libmosquitto (libmosquitto-dev): the MQTT client of the MQTT bridge plugin, and only of it.
#include <mosquitto.h>
