# Runs inside the new root filesystem (chroot) as its last step: the build's user and what AppVeyor's Ubuntu
# images set up for it.
set -eu
useradd --create-home --uid 1000 --shell /bin/bash appveyor
echo 'appveyor ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/appveyor
chmod 0440 /etc/sudoers.d/appveyor
mkdir -p /home/appveyor/projects /opt/appveyor/bin
# the executor binds the runner's `appveyor` command into /opt/appveyor/bin for each job
ln -s /opt/appveyor/bin/appveyor /usr/local/bin/appveyor
# $HOME/venvX.Y for the image's Python, as on AppVeyor's Ubuntu images (`source $HOME/venv3.11/bin/activate`)
version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
su appveyor -c "python3 -m venv /home/appveyor/venv$version"
chown -R appveyor:appveyor /home/appveyor
echo 'Ubuntu (Conveyor local image: Debian bookworm packages)' > /etc/conveyor-image
