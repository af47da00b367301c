# Runs inside the new root filesystem (chroot) as its last step: the build's user and what AppVeyor's Ubuntu
# images set up for it.
set -eu
# its home holds the registry settings already (build.sh): it is made the user's, and gets the user's skeleton;
# ~/.nvm leads to nvm's Node.js (node_versions.py), which the user owns as nvm's own would be (npm install -g)
useradd --create-home --uid 1000 --shell /bin/bash appveyor 2>/dev/null
cp -rn /etc/skel/. /home/appveyor/
ln -s /opt/nvm /home/appveyor/.nvm
chown -R appveyor:appveyor /home/appveyor /opt/nvm
echo 'appveyor ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/appveyor
chmod 0440 /etc/sudoers.d/appveyor
mkdir -p /home/appveyor/projects /opt/appveyor/bin
# the executor binds the runner's `appveyor` command into /opt/appveyor/bin for each job
ln -s /opt/appveyor/bin/appveyor /usr/local/bin/appveyor
# $HOME/venvX.Y for the image's Python, as on AppVeyor's Ubuntu images (`source $HOME/venv3.11/bin/activate`)
version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
su appveyor -c "python3 -m venv /home/appveyor/venv$version"
# the Node.js versions node_versions.py put in nvm's folder, and the default's commands for shells without nvm
# (sudo, sh -c): the session's nvm puts the version in use first on PATH
default=$(ls -d /opt/nvm/versions/node/v"$(cat /opt/nvm/alias/default)".* | sort -V | tail -n 1)
for command in node npm npx; do ln -s "$default/bin/$command" "/usr/local/bin/$command"; done
chown -R appveyor:appveyor /home/appveyor
# 7za and 7z as AppVeyor's p7zip has them (bookworm's 7zip names its command 7zz)
for command in 7z 7za; do command -v "$command" >/dev/null || ln -s /usr/bin/7zz "/usr/local/bin/$command"; done
# az: Debian's azure-cli is 1.5 GB and would double the image's build time, so it installs on its first call in a
# job (sudo apt-get install azure-cli: about 3 minutes here) and runs from then on
if [ ! -x /usr/bin/az ]; then
	cat > /usr/local/bin/az <<'AZ'
#!/bin/sh
if [ ! -x /usr/bin/az ]; then
	echo "az: installing Debian's azure-cli on its first call in this job (sudo apt-get install azure-cli)..." >&2
	{ sudo -n apt-get install -y -q azure-cli || { sudo -n apt-get update -q && sudo -n apt-get install -y -q azure-cli; }; } >&2 || exit 1
fi
exec /usr/bin/az "$@"
AZ
	chmod 0755 /usr/local/bin/az
fi
# PostgreSQL: AppVeyor's postgres / Password12! over TCP; the local socket trusts (psql -U postgres, sudo -u postgres)
pg=/etc/postgresql/15/main
echo "ALTER USER postgres PASSWORD 'Password12!';" | su postgres -c "/usr/lib/postgresql/15/bin/postgres --single -D /var/lib/postgresql/15/main -c config_file=$pg/postgresql.conf postgres" >/dev/null 2>&1
printf '%s\n' 'local all all trust' 'host all all 127.0.0.1/32 scram-sha-256' 'host all all ::1/128 scram-sha-256' > $pg/pg_hba.conf
# services start only when a job asks (images/ubuntu/services.sh); nothing starts them in a container otherwise
chmod 0755 /opt/conveyor/services.sh
echo 'Ubuntu (Conveyor local image: Debian bookworm packages)' > /etc/conveyor-image
