DROP TABLE blocks;
DROP TABLE friend_requests;
