/*
 * The floor of the BLE benchmark: the least CPU any client of BlueZ's D-Bus API spends per
 * heart-rate notification. A C program on sd-bus that connects to every strap bluetoothd
 * knows, subscribes to Heart Rate Measurement (0x2A37) with StartNotify (or, with --acquire,
 * AcquireNotify) and only receives the notifications: it reads each value and counts it, and
 * stores nothing, decodes nothing, logs nothing. What hrmd spends above it is hrmd's own.
 *
 *   floor_client [--acquire] SECONDS
 *
 * Prints one JSON line: straps subscribed, notifications received in all and in the SECONDS
 * of recording (which start once every strap is subscribed), and the process's CPU time
 * (user + system) in all and over the recording.
 *
 * Build: cc -O2 -o floor_client bench/floor_client.c $(pkg-config --cflags --libs libsystemd)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#define MAX_STRAPS 256
#define HEART_RATE_MEASUREMENT "00002a37-0000-1000-8000-00805f9b34fb"

static long received;

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(int r, const char *what) {
    if (r < 0) {
        fprintf(stderr, "floor_client: %s: %s\n", what, strerror(-r));
        exit(1);
    }
}

/* PropertiesChanged of a characteristic: the new Value's bytes, read and counted. */
static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata;
    (void)error;
    const char *interface;
    if (sd_bus_message_read(m, "s", &interface) < 0 || strcmp(interface, "org.bluez.GattCharacteristic1") != 0)
        return 0;
    if (sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
        return 0;
    while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
        const char *name;
        if (sd_bus_message_read(m, "s", &name) < 0)
            return 0;
        if (strcmp(name, "Value") == 0 && sd_bus_message_enter_container(m, 'v', "ay") > 0) {
            const void *bytes;
            size_t size;
            if (sd_bus_message_read_array(m, 'y', &bytes, &size) >= 0 && size >= 2)
                received++;
            sd_bus_message_exit_container(m);
        } else {
            sd_bus_message_skip(m, "v");
        }
        sd_bus_message_exit_container(m);
    }
    return 0;
}

/* Object paths of bluetoothd's objects with `interface` (and, when `uuid` is given, whose
 * UUID property is it), from ObjectManager.GetManagedObjects. Returns how many. */
static int managed_objects(sd_bus *bus, const char *wanted, const char *uuid, char **paths, int capacity) {
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    check(sd_bus_call_method(bus, "org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &error, &reply, ""),
          "GetManagedObjects");
    int count = 0;
    check(sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}"), "objects");
    while (sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}") > 0) {
        const char *path;
        check(sd_bus_message_read(reply, "o", &path), "path");
        bool matches = false;
        check(sd_bus_message_enter_container(reply, 'a', "{sa{sv}}"), "interfaces");
        while (sd_bus_message_enter_container(reply, 'e', "sa{sv}") > 0) {
            const char *interface;
            check(sd_bus_message_read(reply, "s", &interface), "interface");
            bool wanted_interface = strcmp(interface, wanted) == 0;
            check(sd_bus_message_enter_container(reply, 'a', "{sv}"), "properties");
            while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
                const char *name;
                check(sd_bus_message_read(reply, "s", &name), "property");
                if (wanted_interface && uuid && strcmp(name, "UUID") == 0) {
                    const char *value;
                    check(sd_bus_message_read(reply, "v", "s", &value), "UUID");
                    matches = strcasecmp(value, uuid) == 0;
                } else {
                    check(sd_bus_message_skip(reply, "v"), "value");
                }
                sd_bus_message_exit_container(reply);
            }
            sd_bus_message_exit_container(reply);
            sd_bus_message_exit_container(reply);
            if (wanted_interface && !uuid)
                matches = true;
        }
        sd_bus_message_exit_container(reply);
        sd_bus_message_exit_container(reply);
        if (matches && count < capacity)
            paths[count++] = strdup(path);
    }
    sd_bus_message_unref(reply);
    return count;
}

int main(int argc, char **argv) {
    bool acquire = argc > 1 && strcmp(argv[1], "--acquire") == 0;
    if (argc != (acquire ? 3 : 2)) {
        fprintf(stderr, "usage: floor_client [--acquire] SECONDS\n");
        return 64;
    }
    double seconds = atof(argv[acquire ? 2 : 1]);
    sd_bus *bus = NULL;
    check(sd_bus_open_system(&bus), "system bus");
    check(sd_bus_match_signal(bus, NULL, "org.bluez", NULL, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                              on_properties_changed, NULL),
          "AddMatch");

    char *devices[MAX_STRAPS];
    int device_count = managed_objects(bus, "org.bluez.Device1", NULL, devices, MAX_STRAPS);
    for (int i = 0; i < device_count; i++) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        check(sd_bus_call_method(bus, "org.bluez", devices[i], "org.bluez.Device1", "Connect", &error, NULL, ""), "Connect");
    }
    /* The characteristics appear once the services are resolved. */
    char *characteristics[MAX_STRAPS];
    int characteristic_count = 0;
    for (double deadline = now() + 20; now() < deadline; usleep(50000)) {
        for (int i = 0; i < characteristic_count; i++) free(characteristics[i]);
        characteristic_count = managed_objects(bus, "org.bluez.GattCharacteristic1", HEART_RATE_MEASUREMENT, characteristics, MAX_STRAPS);
        if (characteristic_count >= device_count)
            break;
    }
    struct pollfd sockets[MAX_STRAPS + 1];
    for (int i = 0; i < characteristic_count; i++) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        if (acquire) {
            int fd;
            uint16_t mtu;
            check(sd_bus_call_method(bus, "org.bluez", characteristics[i], "org.bluez.GattCharacteristic1", "AcquireNotify", &error,
                                     &reply, "a{sv}", 0),
                  "AcquireNotify");
            check(sd_bus_message_read(reply, "hq", &fd, &mtu), "AcquireNotify reply");
            sockets[i + 1] = (struct pollfd){.fd = fcntl(fd, F_DUPFD_CLOEXEC, 3), .events = POLLIN};
        } else {
            check(sd_bus_call_method(bus, "org.bluez", characteristics[i], "org.bluez.GattCharacteristic1", "StartNotify", &error, &reply, ""),
                  "StartNotify");
        }
        sd_bus_message_unref(reply);
    }
    int socket_count = acquire ? characteristic_count : 0;

    double cpu_at_start = cpu_seconds();
    long received_at_start = received;
    unsigned char value[512];
    for (double end = now() + seconds; now() < end;) {
        while (sd_bus_process(bus, NULL) > 0) {}
        sockets[0] = (struct pollfd){.fd = sd_bus_get_fd(bus), .events = sd_bus_get_events(bus)};
        int timeout = (int)((end - now()) * 1000) + 1;
        if (poll(sockets, socket_count + 1, timeout) < 0 && errno != EINTR)
            check(-errno, "poll");
        for (int i = 1; i <= socket_count; i++) {
            if (sockets[i].revents & POLLIN) {
                ssize_t size = read(sockets[i].fd, value, sizeof value);
                if (size >= 2) received++;
            }
        }
    }
    double cpu_recording = cpu_seconds() - cpu_at_start;
    printf("{\"straps\": %d, \"subscribed\": %d, \"notify\": \"%s\", \"notifications\": %ld, \"notifications_recording\": %ld, "
           "\"cpu_total_s\": %.4f, \"cpu_recording_s\": %.4f}\n",
           device_count, characteristic_count, acquire ? "AcquireNotify" : "StartNotify", received, received - received_at_start,
           cpu_seconds(), cpu_recording);
    return 0;
}
