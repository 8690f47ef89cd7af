# Debian packages through CPack's DEB generator, one per install component
# (CMakeLists.txt gives every install() rule a COMPONENT):
#   lockstep        the controller, lockstep.1, bash completion
#   lockstep-agent  the daemon, lockstep-agent.8, the systemd unit,
#                   /etc/lockstep/agent.toml (a conffile), /var/lib/lockstep
#   lockstep-service the shared results service, its systemd unit and page
# ./deploy/package.sh builds them into build/packages/; by hand:
#   cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release && cmake --build build/release
#   (cd build/release && cpack -G DEB)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lockstep)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Lockstep")
set(CPACK_PACKAGE_CONTACT "Lockstep maintainers <lockstep@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/packages)
# Release binaries without their symbol tables (a few MB less per package).
set(CPACK_STRIP_FILES ON)
# Only these components: gtest's or anything else's install rules stay out.
set(CPACK_COMPONENTS_ALL lockstep lockstep-agent lockstep-service)

set(CPACK_DEB_COMPONENT_INSTALL ON)
# <name>_<version>-<release>_<arch>.deb, as dpkg-name would call them.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Runtime libraries (libgrpc++1.51, libprotobuf32, libabsl, libssl3,
# libsqlite3-0, libstdc++6, ...) found by dpkg-shlibdeps (dpkg-dev) from
# the binaries, so the Depends line matches what they link.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_LOCKSTEP_PACKAGE_NAME lockstep)
# One string: the first line is the synopsis, the rest the long description.
set(CPACK_COMPONENT_LOCKSTEP_DESCRIPTION "parallel file system benchmark: the controller
lockstep reads a TOML plan (or an IOR or mdtest command line) and drives
lockstep-agent daemons over gRPC with mutual TLS, phase by phase, with one
start instant for every task; it keeps runs in a history database.")
# A controller with --local N starts agents next to itself.
set(CPACK_DEBIAN_LOCKSTEP_PACKAGE_RECOMMENDS lockstep-agent)

set(CPACK_DEBIAN_LOCKSTEP-AGENT_PACKAGE_NAME lockstep-agent)
set(CPACK_COMPONENT_LOCKSTEP-AGENT_DESCRIPTION "parallel file system benchmark: the agent daemon
lockstep-agent runs on client, OSS and MDS nodes: it executes the phases a
lockstep controller sends over mutual TLS, drops caches and reports
telemetry. The package ships a systemd unit (not enabled) and
/etc/lockstep/agent.toml.")
# adduser: postinst makes the lockstep system user.
set(CPACK_DEBIAN_LOCKSTEP-AGENT_PACKAGE_DEPENDS "adduser")
# agent.toml is a conffile (dpkg keeps a site's edits on upgrade and asks);
# postinst makes the user and /var/lib/lockstep's owner; the scripts reload
# systemd where it runs.
set(LOCKSTEP_DEBIAN_DIR ${CMAKE_CURRENT_SOURCE_DIR}/deploy/debian)
set(CPACK_DEBIAN_LOCKSTEP-AGENT_PACKAGE_CONTROL_EXTRA
    ${LOCKSTEP_DEBIAN_DIR}/conffiles
    ${LOCKSTEP_DEBIAN_DIR}/postinst
    ${LOCKSTEP_DEBIAN_DIR}/prerm
    ${LOCKSTEP_DEBIAN_DIR}/postrm)
set(CPACK_DEBIAN_LOCKSTEP-SERVICE_PACKAGE_NAME lockstep-service)
set(CPACK_COMPONENT_LOCKSTEP-SERVICE_DESCRIPTION "parallel file system benchmark: the shared results service
lockstep-service keeps the runs that sites push (lockstep push) in PostgreSQL,
checks each run bundle's hash and signature, enforces per-site rights and
serves a web view of trends and cross-site comparisons over HTTPS. The
package ships a systemd unit (not enabled).")
# The database may live on another host: PostgreSQL is recommended, not required.
set(CPACK_DEBIAN_LOCKSTEP-SERVICE_PACKAGE_RECOMMENDS "postgresql-15")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
