"""l3mp on ROS 2: a node speaking rmw_zenoh's wire format over Zenoh (no rclpy needed)."""
