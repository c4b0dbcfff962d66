// The thinnest layer Swift needs over libdbus: its types, and DBUS_TYPE_*
// (macros like ((int) 's') that Swift cannot import) re-exported as constants.
// The library is not linked: BuzzChannels loads it with dlopen (LibDBus.swift).
#ifndef BUZZ_CDBUS_SHIM_H
#define BUZZ_CDBUS_SHIM_H
#include <dbus/dbus.h>

static const int CDBus_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBus_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBus_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBus_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBus_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBus_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBus_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBus_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;
static const int CDBus_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBus_TIMEOUT_USE_DEFAULT = DBUS_TIMEOUT_USE_DEFAULT;
#endif
