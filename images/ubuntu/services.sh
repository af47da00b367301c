#!/bin/bash
# Starts the services appveyor.yml's `services:` or `stack:` asks for, inside the job's own container, before init
# (the runner runs `sudo /opt/conveyor/services.sh NAME...`), with AppVeyor's names and credentials:
#   postgresql (pgsql): postgres / Password12! on localhost:5432
#   mysql (MariaDB, speaking MySQL's protocol): root / Password12! on localhost:3306
#   redis: localhost:6379          rabbitmq: guest / guest on localhost:5672
# A service that does not start fails the job: its own last log lines are printed, and the script exits 1.
set -u
PASSWORD='Password12!'

ready() {  # ready SECONDS COMMAND...: whether COMMAND succeeds within SECONDS
	local deadline=$(($(date +%s) + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

failed() {  # failed NAME LOG: say so with the service's last log lines
	echo "The service $1 did not start. Its last log lines ($2):"
	tail -n 20 "$2" 2>/dev/null | sed 's/^/    /'
	exit 1
}

start_postgresql() {
	local log=/var/log/postgresql/postgresql-15-main.log
	pg_ctlcluster 15 main start >>"$log" 2>&1 || failed postgresql "$log"
	ready 30 pg_isready -q -h localhost || failed postgresql "$log"
}

start_mysql() {
	local log=/var/log/mysql/error.log
	mkdir -p /run/mysqld /var/log/mysql && touch "$log" && chown mysql:mysql /run/mysqld /var/log/mysql "$log"
	(mysqld_safe --log-error="$log" >>"$log" 2>&1 &)
	ready 60 mariadb-admin --protocol=socket -uroot ping || failed mysql "$log"
	# root keeps the unix socket (as Debian sets it up) and gets AppVeyor's password over TCP and the socket alike
	mariadb --protocol=socket -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('$PASSWORD') OR unix_socket; FLUSH PRIVILEGES;" >>"$log" 2>&1 || failed mysql "$log"
}

start_redis() {
	local log=/var/log/redis/redis-server.log
	mkdir -p /var/log/redis && chown redis:redis /var/log/redis
	redis-server /etc/redis/redis.conf --daemonize yes --logfile "$log" >>"$log" 2>&1 || failed redis "$log"
	ready 20 redis-cli ping || failed redis "$log"
}

start_rabbitmq() {
	local log=/var/log/rabbitmq/startup.log
	mkdir -p /var/log/rabbitmq && chown rabbitmq:rabbitmq /var/log/rabbitmq
	(su rabbitmq -s /bin/sh -c 'HOME=/var/lib/rabbitmq rabbitmq-server' >>"$log" 2>&1 &)
	ready 90 su rabbitmq -s /bin/sh -c 'HOME=/var/lib/rabbitmq rabbitmqctl await_startup --timeout 1' || failed rabbitmq "$log"
}

for name in "$@"; do
	started=$(date +%s.%N)
	case $name in
		postgresql | pgsql) start_postgresql ;;
		mysql) start_mysql ;;
		redis) start_redis ;;
		rabbitmq) start_rabbitmq ;;
		*) echo "The service $name cannot run in this image."; exit 1 ;;
	esac
	awk -v name="$name" -v from="$started" -v to="$(date +%s.%N)" 'BEGIN { printf "Service %s started in %.1f s\n", name, to - from }'
done
