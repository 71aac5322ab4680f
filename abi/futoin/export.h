/**
 * @file futoin/export.h
 * @brief FUTOIN_API marks every exported symbol. The library is built with
 *        -fvisibility=hidden and a linker version script; a symbol without
 *        this macro is never exported.
 */
#ifndef FUTOIN_EXPORT_H
#define FUTOIN_EXPORT_H

#if defined(FUTOIN_BUILDING_LIBRARY) && defined(__GNUC__)
#define FUTOIN_API __attribute__((visibility("default")))
#else
#define FUTOIN_API
#endif

#endif /* FUTOIN_EXPORT_H */
