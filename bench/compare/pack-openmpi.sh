#!/usr/bin/env bash
# Copies this machine's OpenMPI (Debian 12's 4.1 with its PMIx) into DIR so that mpirun and the
# MPI peer bench run on another x86-64 Linux machine that has no OpenMPI, from any directory:
#
#   bench/compare/pack-openmpi.sh DIR     here (bench/compare/pack.sh calls it as DIR/openmpi)
#   source DIR/env.sh                     there: PATH, LD_LIBRARY_PATH and the install dirs
#
# OpenMPI and PMIx find their plugins, help texts and default parameters under the prefix they
# were configured with (/usr); both read their install directories from OPAL_* and PMIX_*
# variables first, which env.sh points into DIR. PMIx's own parameter file names its plugin
# path absolutely, so env.sh overrides that parameter too.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1

orterun=$(command -v orterun || true)
[ -n "$orterun" ] || { echo "pack-openmpi.sh: no orterun on PATH (apt-get install openmpi-bin)" >&2; exit 2; }
ompi_dir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
[ -d "$ompi_dir" ] || { echo "pack-openmpi.sh: ompi_info names no plugin directory" >&2; exit 2; }
libmpi=$(dirname "$ompi_dir")/libmpi.so
# Debian keeps PMIx in a directory of its own, above the library OpenMPI's PMIx plugin loads.
libpmix=$(ldd "$ompi_dir"/mca_pmix_ext*.so | awk '$1 ~ /^libpmix\.so/ {print $3}' | head -1)
[ -n "$libpmix" ] || { echo "pack-openmpi.sh: no PMIx plugin in $ompi_dir loads libpmix" >&2; exit 2; }
pmix_dir=$(dirname "$(dirname "$(readlink -f "$libpmix")")")
[ -d "$pmix_dir/lib/pmix" ] || { echo "pack-openmpi.sh: no PMIx plugins in $pmix_dir/lib/pmix" >&2; exit 2; }

rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib" "$dir/share" "$dir/etc" "$dir/pmix/lib" "$dir/pmix/share"
cp -L "$orterun" "$(command -v orted)" "$dir/bin/"
ln -s orterun "$dir/bin/mpirun"
cp -a "$ompi_dir" "$dir/lib/openmpi"
cp -a /usr/share/openmpi "$dir/share/openmpi"
cp -a /etc/openmpi "$dir/etc/openmpi"
cp -a "$pmix_dir/lib/pmix" "$dir/pmix/lib/pmix"
cp -a "$pmix_dir/share/pmix" "$dir/pmix/share/pmix"
tools/bundle-libs.sh "$dir/lib" "$dir/bin/orterun" "$dir/bin/orted" "$libmpi" \
  $(find "$dir/lib/openmpi" "$dir/pmix/lib/pmix" -name '*.so')

cat >"$dir/env.sh" <<'EOF'
# Source this to run the OpenMPI copied here (bench/compare/pack-openmpi.sh).
ompi_root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=$ompi_root OPAL_BINDIR=$ompi_root/bin OPAL_LIBDIR=$ompi_root/lib
export OPAL_PKGLIBDIR=$ompi_root/lib/openmpi OPAL_DATADIR=$ompi_root/share
export OPAL_PKGDATADIR=$ompi_root/share/openmpi OPAL_SYSCONFDIR=$ompi_root/etc/openmpi
export PMIX_PREFIX=$ompi_root/pmix PMIX_LIBDIR=$ompi_root/pmix/lib
export PMIX_PKGLIBDIR=$ompi_root/pmix/lib/pmix PMIX_DATADIR=$ompi_root/pmix/share
export PMIX_PKGDATADIR=$ompi_root/pmix/share/pmix PMIX_SYSCONFDIR=$ompi_root/pmix/share
export PMIX_MCA_mca_base_component_path=$ompi_root/pmix/lib/pmix
export PATH=$ompi_root/bin:$PATH
export LD_LIBRARY_PATH=$ompi_root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
EOF
du -sh "$dir"
