"""``step-planner hmi``: a web page for the person at the robot, a client of the node's action and services.

:mod:`.session` holds the page's state and checks what a person sends (plain Python); :mod:`.server` is the
web server (Starlette: the page, one WebSocket, who may connect); :mod:`.ros_link` is the thin ROS client;
:mod:`.main` starts them. The page itself (plain HTML/JS/CSS, no build step) is
package data in ``page/``, installed beside the server that serves it.
"""
