#include "CSDBusVTable.h"

#include <string.h>

size_t csdbus_vtable_entry_size(void) {
        return sizeof(sd_bus_vtable);
}

/* Zeroes `entry` (unused union bytes must be zero) and sets its type and flags. */
static void begin_entry(sd_bus_vtable *entry, uint8_t type, uint64_t flags) {
        memset(entry, 0, sizeof(*entry));
        entry->type = type;
        entry->flags = flags;
}

void csdbus_vtable_start(sd_bus_vtable *entry, uint64_t flags) {
        begin_entry(entry, _SD_BUS_VTABLE_START, flags);
        entry->x.start.element_size = sizeof(sd_bus_vtable);
        entry->x.start.features = _SD_BUS_VTABLE_PARAM_NAMES;
        entry->x.start.vtable_format_reference = &sd_bus_object_vtable_format;
}

void csdbus_vtable_method(
                sd_bus_vtable *entry, const char *member, const char *signature, const char *result,
                const char *names, sd_bus_message_handler_t handler, uint64_t flags) {
        begin_entry(entry, _SD_BUS_VTABLE_METHOD, flags);
        entry->x.method.member = member;
        entry->x.method.signature = signature;
        entry->x.method.result = result;
        entry->x.method.handler = handler;
        entry->x.method.names = names;
}

void csdbus_vtable_signal(sd_bus_vtable *entry, const char *member, const char *signature, const char *names, uint64_t flags) {
        begin_entry(entry, _SD_BUS_VTABLE_SIGNAL, flags);
        entry->x.signal.member = member;
        entry->x.signal.signature = signature;
        entry->x.signal.names = names;
}

void csdbus_vtable_property(
                sd_bus_vtable *entry, const char *member, const char *signature, sd_bus_property_get_t getter, uint64_t flags) {
        begin_entry(entry, _SD_BUS_VTABLE_PROPERTY, flags);
        entry->x.property.member = member;
        entry->x.property.signature = signature;
        entry->x.property.get = getter;
}

void csdbus_vtable_end(sd_bus_vtable *entry) {
        begin_entry(entry, _SD_BUS_VTABLE_END, 0);
}

uint64_t csdbus_flag_unprivileged(void) {
        return SD_BUS_VTABLE_UNPRIVILEGED;
}

uint64_t csdbus_flag_property_const(void) {
        return SD_BUS_VTABLE_PROPERTY_CONST;
}
